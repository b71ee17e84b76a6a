// Hostile nccl-tests logs and NCCL_ALGO / NCCL_PROTO values found by hand (issue 24's hostile
// pass over the log readers): each was read as something else, silently, before.
#include <catch2/catch.hpp>
#include <limits>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/sim/nccl_env_choice.h"
#include "twinccl/sim/nccl_tests_log.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

constexpr const char* kHeader =
    "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n";
constexpr const char* kRow = "  8  2  float  sum  -1  20.0  0.00  0.00  0  20.0  0.00  0.00  0\n";

std::string devices(int ranks) {
  std::string text = "# Using devices\n";
  for (int r = 0; r < ranks; ++r)
    text += "#  Rank  " + std::to_string(r) + " Group 0 Pid 1 on node-a device 0 [0x19] H100\n";
  return text;
}

std::string error_of(const std::string& text, const char* source = "bad.log") {
  try {
    parse_nccl_tests_file_text(text, source);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

// nccl-tests' -J output of one all_reduce row of 8 bytes, with `config` as its "config" fields.
std::string one_row_json(const std::string& config) {
  return R"({"args": ["./all_reduce_perf"], "config": {)" + config + R"(},
    "results": [{"size": 8, "count": 2, "type": "float", "redop": "sum", "root": -1,
      "out_of_place": {"time": 20.0, "alg_bw": 0, "bus_bw": 0}}]})";
}

// The algorithms a table's NCCL_ALGO gives all_reduce, or the ConfigError's message.
std::string algorithms_of(const std::string& nccl_algo) {
  NcclTestsTable t = parse_nccl_tests_output(devices(2) + kHeader + kRow, "env.log").front();
  t.nccl_algo = nccl_algo;
  t.nccl_algo_from = "--algo";
  try {
    std::string out;
    for (const std::string& a : logged_choice(t).algorithms) out += (out.empty() ? "" : ",") + a;
    return out;
  } catch (const ConfigError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("an nGpus a thread cannot drive is an error naming the line, not 'one GPU per thread'",
          "[nccl_tests_log][hostile]") {
  // Before: nGpus 0 or 2^31 was read as no nGpus line at all (-g 1), without a word.
  for (const char* gpus : {"0", "2147483648", "-8", "x"}) {
    INFO(gpus);
    CHECK_THAT(error_of(std::string("# nThread 1 nGpus ") + gpus + " minBytes 8\n" + devices(2) +
                        kHeader + kRow),
               Catch::Contains("bad.log:1: nGpus '" + std::string(gpus) + "'") &&
                   Catch::Contains("1..1024"));
  }
  CHECK_THAT(error_of(one_row_json(R"("ngpus": 0, "devices": [{"rank": 0, "hostname": "a"},
                                                  {"rank": 1, "hostname": "a"}])"),
                      "run.json"),
             Catch::Contains("run.json: config.ngpus is 0"));
}

TEST_CASE("a rank listed twice in a device block is an error, not one rank fewer",
          "[nccl_tests_log][hostile]") {
  // Before: the second line replaced the first: 2 lines for rank 0 read as a 1-rank world. The
  // cause: every process of a run without MPI prints its own rank 0 (nccl-tests #213, #254).
  const std::string twice =
      devices(2) + "#  Rank  0 Group 0 Pid 1 on node-b device 0 [0x19] H100\n";
  CHECK_THAT(error_of(twice + kHeader + kRow),
             Catch::Contains("bad.log:4: every process printed rank 0: nccl-tests ran without "
                             "MPI (built without MPI=1 or not started by mpirun); rank 0 is at "
                             "bad.log:2 and bad.log:4"));
  CHECK_THAT(error_of(one_row_json(R"("ngpus": 1, "devices": [{"rank": 0, "hostname": "a"},
                                                  {"rank": 0, "hostname": "a"}])"),
                      "run.json"),
             Catch::Contains("config.devices lists rank 0 twice"));
}

TEST_CASE("two runs pasted without their headers are two device blocks, not a rank twice",
          "[nccl_tests_log][hostile]") {
  // Before: the second run's device lines were counted in the first's block: "rank 0 is listed
  // twice". A device line after a table starts the next run's block.
  std::string lines;
  for (int r = 0; r < 2; ++r)
    lines += "#  Rank  " + std::to_string(r) + " Group 0 Pid 1 on node-a device 0 [0x19] H100\n";
  const std::vector<NcclTestsTable> runs =
      parse_nccl_tests_output(lines + kHeader + kRow + lines + kHeader + kRow, "two.log");
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].ranks == 2);
  CHECK(runs[1].ranks == 2);
  CHECK(runs[1].rows.front().line == 8);
}

TEST_CASE("a long NCCL_ALGO in a log is read whole, not cut at 80 characters",
          "[nccl_tests_log][hostile]") {
  // Before: the value was cut to 80 characters and "...": a valid list of 3000 names was
  // refused as "unknown algorithm '...'" (by hand, -J's env with 10000: the same).
  std::string names = "Ring";
  for (int i = 1; i < 3000; ++i) names += ",Ring";
  const NcclTestsTable t =
      parse_nccl_tests_output("NCCL_ALGO=" + names + "\n" + devices(2) + kHeader + kRow, "a.log")
          .front();
  CHECK(t.nccl_algo == names);
  CHECK(logged_choice(t).algorithms == std::vector<std::string>{"ring"});
  // A message showing it stays short.
  NcclTestsTable bad = t;
  bad.nccl_algo = names + ",Rnig";
  try {
    logged_choice(bad);
    FAIL("no ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("unknown algorithm 'Rnig'"));
    CHECK(std::string(e.what()).size() < 400);
  }
}

TEST_CASE("NCCL_ALGO lists read as NCCL's parseList reads them", "[nccl_tests_log][hostile]") {
  // Empty names are skipped as strtok_r skips them (before: "unknown algorithm ''").
  CHECK(algorithms_of("Ring,") == "ring");
  CHECK(algorithms_of("Ring,,Tree") == "tree,ring");
  CHECK(algorithms_of("Ring;") == "ring");
  CHECK(algorithms_of("^") == "tree,ring,nvls,nvls_tree,pat");  // all but none
  CHECK_THAT(algorithms_of(",,"), Catch::Contains("NCCL_ALGO=',,' leaves none for all_reduce"));
  // NCCL refuses a collective prefix it does not know (before: ignored, NCCL's own choice).
  CHECK_THAT(
      algorithms_of("allredcue:Ring"),
      Catch::Contains("unknown collective prefix 'allredcue'") && Catch::Contains("AllReduce"));
  CHECK(algorithms_of("Tree;allgather:Ring") == "tree");
  CHECK(algorithms_of("Tree;AllReduce:^Tree,NVLS,NVLSTree,PAT") == "ring");
  // And still refuses what NCCL refuses.
  CHECK_THAT(algorithms_of("ring,^tree"), Catch::Contains("unknown algorithm '^tree'"));
  CHECK_THAT(algorithms_of(";Ring"), Catch::Contains("'collective:' prefix"));
  CHECK_THAT(algorithms_of("Ri\xc3\xa9ng"), Catch::Contains("unknown algorithm 'Ri\\xc3\\xa9ng'"));
}

TEST_CASE("NCCL_ALGO's ':' pieces read as NCCL's strtok_r cuts them", "[nccl_tests_log][hostile]") {
  // NVIDIA/nccl v2.30.7-1 src/graph/tuning.cc:55-127: empty ':' pieces dropped, a third ignored,
  // only the value's first entry without a prefix. Before: "Ring:" and ":Ring" were refused
  // (unknown prefix), "allreduce::Ring" too (unknown algorithm ':Ring'), and "Ring;allreduce:"
  // was read as an empty list for allreduce.
  CHECK(algorithms_of("Ring:") == "ring");
  CHECK(algorithms_of(":Ring") == "ring");
  CHECK(algorithms_of("allreduce::Ring") == "ring");
  CHECK(algorithms_of("allreduce:Ring:Tree") == "ring");
  CHECK_THAT(algorithms_of("Ring;allreduce:"), Catch::Contains("'collective:' prefix"));
  // Names compare as strcasecmp does: case only (before: '-', '_' and ' ' were ignored too).
  CHECK(algorithms_of("nvlstree,RING") == "ring,nvls_tree");
  CHECK_THAT(algorithms_of("NVLS-Tree"), Catch::Contains("unknown algorithm 'NVLS-Tree'"));
  CHECK_THAT(algorithms_of("all_reduce:Ring"), Catch::Contains("unknown collective prefix"));
}

TEST_CASE("a row's size and count are checked against each other without overflow",
          "[nccl_tests_log][hostile]") {
  NcclTestsTable t;
  t.source = "big.log";
  t.ranks = 262144;
  NcclTestsRow row;
  row.line = 7;
  row.dtype = DataType::float32;
  // count x 4 x 262144 = 2^64 + 2^45: the old check's product wrapped to the row's size.
  row.count = (std::size_t{1} << 44) + (std::size_t{1} << 25);
  row.size_bytes = std::size_t{1} << 45;
  CHECK_THROWS_WITH(check_row_size(t, row),
                    Catch::Contains("big.log:7: size 35184372088832 and count 17592219598848") &&
                        Catch::Contains("contradict"));
  row.count = 1024;
  row.size_bytes = 4096;  // whole buffer
  CHECK_NOTHROW(check_row_size(t, row));
  row.size_bytes = std::size_t{4096} * 262144;  // per rank
  CHECK_NOTHROW(check_row_size(t, row));
}

TEST_CASE("a row's size is checked against its count as the table's collective prints it",
          "[nccl_tests_log][hostile]") {
  // oracle-quickstart/oci-gpu-quickstarts' GB200 all-to-all table: an 8 GiB row whose count is the
  // whole buffer's (2147483648 = 8 GiB / 4), read with --collective alltoall on 8 ranks, was priced
  // with a count 8 times too large (+629%).
  NcclTestsTable t;
  t.source = "gb200-alltoall.log";
  t.ranks = 8;
  t.collective = "all_to_all";
  t.kind = OpKind::all_to_all;
  NcclTestsRow row;
  row.line = 5;
  row.dtype = DataType::float32;
  row.size_bytes = 8589934592;
  row.count = 2147483648;
  CHECK_THROWS_WITH(check_row_size(t, row),
                    Catch::Contains("gb200-alltoall.log:5: size 8589934592 and count 2147483648 "
                                    "float32 contradict each other") &&
                        Catch::Contains("68719476736 bytes on 8 ranks: all_to_all prints the "
                                        "count per rank") &&
                        Catch::Contains("--ranks"));
  row.count = 268435456;  // per rank, as nccl-tests prints it
  CHECK_NOTHROW(check_row_size(t, row));
  t.collective = "all_reduce";
  t.kind = OpKind::all_reduce;
  CHECK_THROWS_WITH(
      check_row_size(t, row),
      Catch::Contains("1073741824 bytes: all_reduce prints the whole buffer's count"));
  row.count = 2147483648;
  CHECK_NOTHROW(check_row_size(t, row));
  t.collective = "sendrecv";  // no OpKind: either
  t.kind.reset();
  row.count = 268435456;
  CHECK_NOTHROW(check_row_size(t, row));
}

TEST_CASE("a device line that ends at 'device' reads without a GPU name, the next line gives it",
          "[nccl_tests_log][hostile]") {
  // Read past the line's last word once (fuzz_nccl_tests_log found it): the GPU name is the
  // words after the device number and bus id, which a cut line lacks.
  const std::vector<NcclTestsTable> t = parse_nccl_tests_file_text(
      "# Using devices\n#  Rank  0 Group  0 Pid 1 on node005 device\n"
      "#  Rank  1 Group  0 Pid 1 on node005 device  1 [0x53] NVIDIA GB300\n"
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      "  8  2  float  sum  -1  40.0  0.00  0.00  0  39.0  0.00  0.00  0\n",
      "bad.log");
  REQUIRE(t.size() == 1);
  CHECK(t[0].ranks == 2);
  CHECK(t[0].gpu_name == "NVIDIA GB300");
}
