// What NCCL ran at each size, read from its own per-call lines (NCCL_DEBUG=INFO
// NCCL_DEBUG_SUBSYS=TUNING; twinccl/sim/nccl_ran_choice.h): the three forms NCCL printed since
// 2.20, matched to a row by the bytes each form counts, and a row then priced as it ran. Also:
// rows NCCL's lines were written into (they share nccl-tests' stdout buffer) are parted and
// joined when the run's host names are known, where they used to be refused.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>

#include "support/error_text.h"
#include "support/nccl_tests_text.h"
#include "twinccl/errors.h"
#include "twinccl/sim/nccl_ran_choice.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;
using Catch::Matchers::Contains;

namespace {

const std::string& kHeader = twinccl_test::kTableHeader;
const std::string kInfo = "node0:77:77 [0] NCCL INFO ";

std::string devices(int ranks, int per_node) { return twinccl_test::device_block(ranks, per_node); }

NcclRanChoice choice_of(const std::string& line) {
  const auto c = nccl_ran_choice(line, "debug.log", 3);
  REQUIRE(c);
  return *c;
}

}  // namespace

TEST_CASE("NCCL's per-call lines are read in each form it printed", "[nccl_ran_choice]") {
  // 2.24 on (v2.24.3-1 src/enqueue.cc:678): names; bytes are NCCL's count x the type's size.
  NcclRanChoice c = choice_of(kInfo +
                              "AllGather: 1048576 Bytes -> Algo RING proto LL128 "
                              "channel{Lo..Hi}={0..15}");
  CHECK(c.function == "all_gather");
  CHECK(c.bytes == 1048576);
  CHECK(c.nccl_count_bytes);
  CHECK(c.algorithm == "ring");
  CHECK(c.protocol == "ll128");
  CHECK(c.from == "debug.log line 3");
  c = choice_of(kInfo + "AllReduce: 8 Bytes -> Algo NVLS_TREE proto SIMPLE channel{Lo..Hi}={0..0}");
  CHECK(c.algorithm == "nvls_tree");
  CHECK(c.protocol == "simple");
  // 2.23 (getAlgoInfo): the collective, then numbers; bytes are the largest buffer.
  c = choice_of(kInfo + "ReduceScatter: 16777216 Bytes -> Algo 6 proto 2 time 812.500000");
  CHECK(c.function == "reduce_scatter");
  CHECK_FALSE(c.nccl_count_bytes);
  CHECK(c.algorithm == "pat");
  CHECK(c.protocol == "simple");
  // 2.20-2.22: no collective. The line of NVIDIA/nccl#1453 (2.22.3, an mpirun rank tag before).
  c = choice_of(
      "[0] h100clust-worker-1:497888:497888 [0] NCCL INFO 262144 Bytes -> Algo 0 proto 1 time "
      "54.707825");
  CHECK(c.function.empty());
  CHECK(c.bytes == 262144);
  CHECK_FALSE(c.nccl_count_bytes);
  CHECK(c.algorithm == "tree");
  CHECK(c.protocol == "ll128");

  // Not a choice a row can take: another line, a call NCCL does not tune, a name or number NCCL
  // does not have, a size past any buffer.
  for (const std::string& line :
       {kInfo + "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
        kInfo + "Send: 8 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..0}",
        kInfo + "AllReduce: 8 Bytes -> Algo Unknown proto LL channel{Lo..Hi}={0..0}",
        kInfo + "AllReduce: 8 Bytes -> Algo 7 proto 1 time 1.0",
        kInfo + "AllReduce: 8 Bytes -> Algo 1 proto 3 time 1.0",
        kInfo + "AllReduce: 1152921504606846976 Bytes -> Algo 1 proto 1 time 1.0",
        kInfo + "AllReduce: 8 Bytes -> Algo RING",
        std::string("AllReduce: 8 Bytes -> Algo RING proto LL")}) {
    INFO(line);
    CHECK_FALSE(nccl_ran_choice(line, "debug.log", 1));
  }
}

TEST_CASE("a log's rows take what NCCL ran, each form matched by the bytes it counts",
          "[nccl_ran_choice]") {
  // 16 ranks on 2 nodes, all_gather: size = 16 x count x 4 bytes. The 2.24 lines count NCCL's
  // count (per rank): 1048576 bytes for the 16 MiB row; the 64 MiB row has no line.
  const std::string rows =
      "    16777216        262144     float    none      -1  150.0  111.8  104.9  0  150.0  111.8  "
      "104.9  0\n"
      "    67108864       1048576     float    none      -1  400.0  167.8  157.3  0  400.0  167.8  "
      "157.3  0\n";
  const std::string named =
      kInfo + "AllGather: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..15}\n";
  auto tables = parse_nccl_tests_output(devices(16, 8) + named + named + kHeader + rows, "ag.log",
                                        {.collective = "all_gather"});
  REQUIRE(tables.size() == 1);
  REQUIRE(tables[0].rows.size() == 2);
  CHECK(tables[0].rows[0].ran_algorithm == "ring");
  CHECK(tables[0].rows[0].ran_protocol == "ll128");
  CHECK(tables[0].rows[0].ran_from == "ag.log line 18");
  CHECK(tables[0].rows[1].ran_algorithm.empty());

  // The 2.22 form counts the largest buffer: the same lines' bytes now name nccl-tests' size.
  const std::string numbered = kInfo + "67108864 Bytes -> Algo 1 proto 2 time 380.0\n";
  tables = parse_nccl_tests_output(devices(16, 8) + numbered + kHeader + rows, "ag.log",
                                   {.collective = "all_gather"});
  CHECK(tables[0].rows[0].ran_algorithm.empty());
  CHECK(tables[0].rows[1].ran_algorithm == "ring");
  CHECK(tables[0].rows[1].ran_protocol == "simple");

  // A line naming another collective is not this table's.
  tables = parse_nccl_tests_output(
      devices(16, 8) + kInfo +
          "AllReduce: 1048576 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..1}\n" + kHeader +
          rows,
      "ag.log", {.collective = "all_gather"});
  CHECK(tables[0].rows[0].ran_algorithm.empty());
}

TEST_CASE("a size NCCL's lines name with two choices keeps none, and CollNet is skipped saying so",
          "[nccl_ran_choice]") {
  const std::string rows =
      "     1048576        262144     float     sum      -1   40.0  26.2  49.2  0   40.0  26.2  "
      "49.2  0\n"
      "     2097152        524288     float     sum      -1   60.0  35.0  65.6  0   60.0  35.0  "
      "65.6  0\n";
  const std::string lines =
      kInfo + "AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..15}\n" +
      kInfo + "AllReduce: 1048576 Bytes -> Algo TREE proto LL128 channel{Lo..Hi}={0..15}\n" +
      kInfo +
      "AllReduce: 2097152 Bytes -> Algo COLLNET_DIRECT proto SIMPLE channel{Lo..Hi}={0..7}\n";
  const auto tables = parse_nccl_tests_output(devices(16, 8) + lines + kHeader + rows, "ar.log");
  REQUIRE(tables[0].rows.size() == 1);  // the CollNet row moved to skipped
  CHECK(tables[0].rows[0].ran_algorithm.empty());
  CHECK(tables[0].ran_conflicting == 1);
  REQUIRE(tables[0].skipped.size() == 1);
  CHECK(tables[0].skipped[0].line == 23);
  CHECK_THAT(tables[0].skipped[0].why, Contains("CollNet (SHARP), which the simulator does not "
                                                "model"));
  CHECK_THAT(tables[0].skipped[0].why, Contains("ar.log line 20"));
}

TEST_CASE("a row is priced as NCCL ran it", "[nccl_ran_choice]") {
  const auto tables = parse_nccl_tests_output(
      devices(16, 8) + kInfo +
          "AllReduce: 1073741824 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..15}\n" +
          kHeader +
          "  1073741824     268435456     float     sum      -1   5000  214.7  402.6  0   5000  "
          "214.7  402.6  0\n",
      "ar.log");
  const topo::Topology t = topo::h100_cluster(2);
  const Request as_ran = request_of(tables[0], tables[0].rows[0], false);
  CHECK(as_ran.algorithm == "ring");
  CHECK(as_ran.protocol == Protocol::simple);
  Request own = as_ran;
  own.algorithm.clear();
  own.protocol.reset();
  const Prediction p = predict(t, as_ran);
  CHECK(p.algorithm == "ring");
  CHECK(p.protocol == Protocol::simple);
  // NCCL's choice as the simulator reads it is NVLS-tree on 2 H100 nodes: the line moved it.
  CHECK(predict(t, own).algorithm == "nvls_tree");
  Request forced = own;
  forced.algorithm = "ring";
  forced.protocol = Protocol::simple;
  CHECK(p.time_us == predict(t, forced).time_us);
}

TEST_CASE("rows NCCL's lines were written into are joined once the run's hosts are known",
          "[nccl_ran_choice][nccl_tests_log]") {
  // NVIDIA/nccl-tests#42's shape: NCCL's line glued to the row's leading columns, the rest of the
  // row on the next line; here with the device block that names node-0 (without one the row is
  // refused: test_nccl_tests_log_skipped.cc). And each timed block glued to a TUNING line.
  const std::string dev =
      "# Using devices\n#  Rank  0 Group  0 Pid  1 on     node-0 device  0 [0x07] H100\n"
      "#  Rank  1 Group  0 Pid  1 on     node-0 device  1 [0x08] H100\n";
  auto tables = parse_nccl_tests_output(
      dev + kHeader +
          "  8  2  float  sum  -1node-0:25:109 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via "
          "P2P/CUMEM\n  85.70  0.00  0.00  0  74.97  0.00  0.00  0\n",
      "run.log", {.collective = "all_reduce"});
  REQUIRE(tables[0].rows.size() == 1);
  CHECK(tables[0].rows[0].line == 5);
  CHECK(tables[0].rows[0].out_of_place->time_us == 85.70);
  CHECK(tables[0].rows[0].in_place->time_us == 74.97);

  const std::string tuning =
      "node-0:25:109 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo RING proto "
      "LL channel{Lo..Hi}={0..0}";
  tables = parse_nccl_tests_output(dev + kHeader + "  1024  256  float  sum  -1" + tuning + "\n" +
                                       tuning + "\n  20.10  0.05  0.05  0" + tuning + "\n" +
                                       tuning + "\n  19.90  0.05  0.05  0\n",
                                   "run.log", {.collective = "all_reduce"});
  REQUIRE(tables[0].rows.size() == 1);
  CHECK(tables[0].rows[0].out_of_place->time_us == 20.10);
  CHECK(tables[0].rows[0].in_place->time_us == 19.90);
  CHECK(tables[0].rows[0].ran_algorithm == "ring");
  CHECK(tables[0].rows[0].ran_protocol == "ll");

  // A host whose name starts with digits: where the root ends is where the known name begins.
  tables = parse_nccl_tests_output(
      "# Using devices\n#  Rank  0 Group  0 Pid  1 on   0666a154 device  0 [0x07] H100\n" +
          kHeader +
          "  8  2  float  sum  -10666a154:25:109 [0] NCCL INFO Connected all rings\n  85.70  0.00  "
          "0.00  0  74.97  0.00  0.00  0\n",
      "run.log", {.collective = "all_reduce"});
  REQUIRE(tables[0].rows.size() == 1);
  CHECK(tables[0].rows[0].root == -1);

  // A row that never got its last piece (its rank's run failed there) is listed as not read,
  // never half-read; the next row and a stray later piece are read as what they are.
  tables = parse_nccl_tests_output(dev + kHeader +
                                       "  8  2  float  sum  -1node-0:25:109 [0] NCCL INFO x\n"
                                       "  16  4  float  sum  -1  21.0  0.00  0.00  0  20.0  0.00  "
                                       "0.00  0\n  85.70  0.00  0.00  0  74.97  0.00  0.00  0\n",
                                   "run.log", {.collective = "all_reduce"});
  REQUIRE(tables[0].rows.size() == 1);
  CHECK(tables[0].rows[0].size_bytes == 16);
  REQUIRE(tables[0].skipped.size() == 2);
  CHECK(tables[0].skipped[0].line == 5);
  CHECK(tables[0].skipped[1].line == 7);
  INFO(tables[0].skipped[0].why);
}

TEST_CASE("an NCCL debug file's lines apply to a log read apart", "[nccl_ran_choice]") {
  std::string text;
  for (int i = 0; i < 1000; ++i) {  // one per call: read once each
    text += kInfo + "AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..15}\n";
  }
  const std::vector<NcclRanChoice> choices = read_nccl_ran_choices(text, "nccl.node0.77.log");
  REQUIRE(choices.size() == 1);
  auto tables = parse_nccl_tests_output(
      devices(16, 8) + kHeader +
          "     1048576        262144     float     sum      -1   40.0  26.2  49.2  0   40.0  "
          "26.2  49.2  0\n",
      "ar.log");
  const RanChoicesApplied a = apply_nccl_ran_choices(tables[0], choices);
  CHECK(a.named == 1);
  CHECK(a.rows == 1);
  CHECK(tables[0].rows[0].ran_algorithm == "ring");
  CHECK(tables[0].rows[0].ran_from == "nccl.node0.77.log line 1");

  // Bounded like a log.
  CHECK_THAT(twinccl_test::error_text([] {
               read_nccl_ran_choices(std::string(kNcclTestsMaxLineBytes + 1, 'x'), "big.log");
             }),
             Contains("big.log:1: a line of 16385 bytes"));
  CHECK_THROWS_AS(read_nccl_ran_choices(std::string(kNcclTestsMaxBytes + 1, '\n'), "huge.log"),
                  ConfigError);
}

TEST_CASE("a log with MPICH's rank prefix, rows and NCCL 2.22's per-call lines glued together",
          "[nccl_ran_choice][nccl_tests_log]") {
  // The shape of NVIDIA/nccl#1453's log (NCCL 2.22.3, `mpirun -prepend-rank`: "[0] " before every
  // line of rank 0): its per-call line and the row's 281.5 us are the thread's; the rest of the
  // row, the device block and the header are made up to complete it.
  const std::string host = "h100clust-worker-1";
  const std::string call = host +
                           ":497888:497888 [0] NCCL INFO 262144 Bytes -> Algo 0 proto 1 "
                           "time 54.707825";
  std::string log = "[0] # Using devices\n";
  for (int r = 0; r < 8; ++r) {
    log += "[0] #  Rank  " + std::to_string(r) + " Group  0 Pid 497888 on " + host + " device  " +
           std::to_string(r) + " [0x1b] NVIDIA H100 80GB HBM3\n";
  }
  log += "[0] " + kHeader;
  log += "[0]       262144         65536     float     sum      -1" + call + "\n";
  for (int i = 0; i < 3; ++i) log += "[0] " + call + "\n";
  log += "[0]     281.5    0.93    1.79      0" + call + "\n[0] " + call + "\n";
  log += "[0]     280.9    0.93    1.63      0\n";
  const auto tables = parse_nccl_tests_output(log, "1453.log", {.collective = "all_reduce"});
  REQUIRE(tables.size() == 1);
  REQUIRE(tables[0].rows.size() == 1);
  const NcclTestsRow& row = tables[0].rows[0];
  CHECK(row.size_bytes == 262144);
  CHECK(row.out_of_place->time_us == 281.5);
  CHECK(row.in_place->time_us == 280.9);
  CHECK(row.ran_algorithm == "tree");
  CHECK(row.ran_protocol == "ll128");
  CHECK(tables[0].ranks == 8);
}

TEST_CASE("a hostile log of glued pieces is read in bounded time and memory", "[nccl_ran_choice]") {
  // 60 MiB of row pieces each followed by an NCCL line full of host-like places: pieces past a
  // line's bound end the row unread, and only a few places a line are tried.
  const std::string dev = "# Using devices\n#  Rank  0 Group  0 Pid  1 on   n device  0 [0x07] H\n";
  std::string noise;
  while (noise.size() < 8000) noise += "n:1:1 [0] ";
  std::string log = dev + kHeader + "  8  2  float  sum  -1n:1:1 [0] NCCL INFO x\n";
  const std::string piece = "  1.0  1.0  1.0  0n:1:1 [0] NCCL INFO " + noise + "\n";
  while (log.size() + piece.size() < (60u << 20)) log += piece;
  const auto start = std::chrono::steady_clock::now();
  const std::string e = twinccl_test::error_text(
      [&] { parse_nccl_tests_output(log, "hostile.log", {.collective = "all_reduce"}); });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  INFO(e);
  // The first piece's row ends unread at the bound; nothing else looks like a row.
  CHECK_THAT(e, Contains("hostile.log: no result row could be read"));
  CHECK_THAT(e, Contains("line 4: the output ends in the middle of this row"));
  CHECK(s < 60.0);  // seconds; the guard is against a scan without end, not a benchmark
}
