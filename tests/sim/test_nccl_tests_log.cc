// The nccl-tests result parser: every published log in tests/fidelity/logs (real measurements,
// copied verbatim; provenance in tests/fidelity/logs/SOURCES.md), each layout variation of
// tests/fidelity/logs/FORMATS.md as a small inline sample, -J JSON, and hostile inputs.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/nccl_tests_text.h"
#include "twinccl/errors.h"
#include "twinccl/sim/nccl_tests_log.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

std::filesystem::path logs_dir() {
  const auto here = std::filesystem::path(__FILE__).parent_path() / ".." / "fidelity" / "logs";
  if (std::filesystem::exists(here)) return here;
  for (auto p = std::filesystem::current_path(); p != p.parent_path(); p = p.parent_path()) {
    if (std::filesystem::exists(p / "tests" / "fidelity" / "logs"))
      return p / "tests" / "fidelity" / "logs";
  }
  FAIL("tests/fidelity/logs not found");
  return {};
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Expected {
  const char* file;
  int ranks, nodes;
  std::size_t rows;
  std::size_t first_size;
  double first_oop_us, first_ip_us;
  std::size_t last_size;
  double last_oop_us, last_ip_us;
  bool wrong_checked;
  const char* version;
};

// Values read off the files by hand.
const Expected kLogs[] = {
    {"a100-sxm4-40gb-dgx-1node-all_reduce-g8-1M-1G.log", 8, 1, 11, 1048576, 78.77, 81.31,
     1073741824, 8139.9, 8201.6, true, ""},
    {"a100-sxm4-80gb-1node-all_reduce-g8.log", 8, 1, 30, 8, 40.12, 38.85, 4294967296, 32336, 32455,
     true, ""},
    {"a100-sxm4-80gb-vm-1node-all_reduce-mpi8-32M-1G.log", 8, 1, 6, 33554432, 344.8, 349.5,
     1073741824, 8109.1, 8109.7, true, "2.16.2+cuda11.6"},
    {"a100-sxm4-80gb-1node-all_reduce-mpi8.log", 8, 1, 30, 8, 20.26, 17.74, 4294967296, 32285,
     32268, true, ""},
    {"gcp-a3mega-h100-2node-all_reduce.log", 16, 2, 31, 8, 135.8, 123.5, 8589934592, 47535, 47743,
     true, ""},
    {"issue290-h100-1node-all_reduce-nvls.log", 8, 1, 6, 134217728, 613.3, 614.3, 4294967296, 15870,
     15773, true, ""},
    {"issue290-h100-2node-all_reduce-default-slurm.log", 16, 2, 11, 8388608, 215.3, 180.0,
     8589934592, 103530, 103538, false, ""},
    {"issue290-h100-2node-all_reduce-ring-slurm.log", 16, 2, 11, 8388608, 407.5, 405.5, 8589934592,
     179148, 180166, false, ""},
    {"issue309-h100-ib400-2node-all_reduce-ring-minctas24.log", 16, 2, 14, 1048576, 156.9, 154.1,
     8589934592, 41015, 41056, true, ""},
    {"issue309-h100-ib400-4node-all_reduce-default.log", 32, 4, 14, 1048576, 317.0, 93.26,
     8589934592, 51285, 51350, true, ""},
    {"issue309-h100-ib400-8node-all_reduce-default.log", 64, 8, 14, 1048576, 117.0, 115.7,
     8589934592, 52733, 52754, true, ""},
    {"issue309-h100-vm-4node-all_reduce-8B-16G.log", 32, 4, 32, 8, 83.42, 34.75, 17179869184, 90986,
     91081, true, "2.26.2+cuda12.8"},
    {"issue309-h100-xe9680-2node-all_reduce-8B-16G.log", 16, 2, 32, 8, 68.52, 24.70, 17179869184,
     68652, 68668, true, "2.26.2+cuda12.8"},
    // Open MPI --tag-output: "[1,0]<stdout>:" before each of the three writes of every row.
    {"aws-p5-2node-all_reduce-nccl2.22.3-ompi-tagged-8B-16G.log", 16, 2, 32, 8, 85.70, 74.97,
     17179869184, 66023, 65990, true, "2.22.3+cuda12.2"},
    {"nebius-h200-2node-all_reduce-1G-16G.log", 16, 2, 5, 1073741824, 4508.0, 4489.7, 17179869184,
     67369, 67212, true, ""},
};

NcclTestsTable one(std::string_view text, std::string_view source = "sample.log",
                   NcclTestsParseOptions o = {}) {
  std::vector<NcclTestsTable> t = parse_nccl_tests_file_text(text, source, o);
  REQUIRE(t.size() == 1);
  return t.front();
}

const char* kHeader =
    "#                                                              out-of-place                   "
    "    in-place\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time "
    "  algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us) "
    " (GB/s)  (GB/s)\n";

std::string devices(int ranks, int per_node) { return twinccl_test::device_block(ranks, per_node); }

std::string error_of(std::string_view text, std::string_view source = "bad.log",
                     NcclTestsParseOptions o = {}) {
  try {
    parse_nccl_tests_file_text(text, source, o);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

}  // namespace

TEST_CASE("every published log parses with its collective, ranks, nodes and rows",
          "[nccl_tests_log]") {
  for (const Expected& e : kLogs) {
    INFO(e.file);
    const std::vector<NcclTestsTable> tables =
        parse_nccl_tests_output(read(logs_dir() / e.file), e.file);
    REQUIRE(tables.size() == 1);
    const NcclTestsTable& t = tables.front();
    CHECK(t.collective == "all_reduce");
    CHECK(t.kind == OpKind::all_reduce);
    CHECK(t.collective_from == "file name");
    CHECK(t.ranks == e.ranks);
    CHECK(t.nodes == e.nodes);
    CHECK_FALSE(t.devices_truncated);
    CHECK(t.complete);
    CHECK(t.dtype == DataType::float32);
    CHECK(t.nccl_version == e.version);
    REQUIRE(t.rows.size() == e.rows);
    const NcclTestsRow& first = t.rows.front();
    const NcclTestsRow& last = t.rows.back();
    CHECK(first.size_bytes == e.first_size);
    CHECK(first.count == e.first_size / 4);
    CHECK(first.redop == "sum");
    CHECK(first.root == -1);
    CHECK(first.out_of_place->time_us == Approx(e.first_oop_us));
    CHECK(first.in_place->time_us == Approx(e.first_ip_us));
    CHECK(first.out_of_place->wrong.has_value() == e.wrong_checked);
    CHECK(last.size_bytes == e.last_size);
    CHECK(last.out_of_place->time_us == Approx(e.last_oop_us));
    CHECK(last.in_place->time_us == Approx(e.last_ip_us));
    CHECK(last.in_place->busbw_gbps > 80);  // 89.4 on the degraded issue290 ring run
  }
}

TEST_CASE("the program name, the test-starting line and --collective name the collective",
          "[nccl_tests_log]") {
  const std::string rows = std::string(kHeader) +
                           "          64             2     float    none      -1    12.00    0.01  "
                           "  0.00      0    11.00    0.01    0.00      0\n";
  const std::string body = devices(4, 4) + rows;
  CHECK(one("mpirun -np 4 ./build/all_gather_perf -b 8 -e 64\n" + body).collective == "all_gather");
  CHECK(one("mpirun -np 4 ./build/all_gather_perf -b 8\n" + body).collective_from ==
        "program name");
  const NcclTestsTable t =
      one("# nccl-tests version 2.17.4 nccl-headers=22602 nccl-library=22703\n"
          "# Collective test starting: alltoall_perf\n# nThread 1 nGpus 1\n#\n" +
          body);
  CHECK(t.collective == "all_to_all");
  CHECK(t.collective_from == "test-starting line");
  CHECK(t.nccl_version == "2.27.3");
  CHECK(t.rows.front().count == 2);  // nccl-tests' count is per rank here: 64 B = 4 ranks x 2 x 4 B
  NcclTestsParseOptions o;
  o.collective = "all_gather_perf";
  CHECK(one(body, "x.log", o).collective == "all_gather");
  o.collective = "allgather";
  CHECK(one(body, "x.log", o).collective_from == "--collective");
  o.collective = "frobnicate";
  CHECK_THAT(error_of(body, "x.log", o), Catch::Contains("--collective 'frobnicate'"));
}

TEST_CASE("the collective is inferred from the columns when nothing names it", "[nccl_tests_log]") {
  const std::string sum_row =
      "  1024  256  float  sum  -1  20.0  0.05  0.09  0  20.0  0.05  0.09  0\n";
  const NcclTestsTable t = one(devices(8, 8) + kHeader + sum_row);
  CHECK(t.collective == "all_reduce");
  CHECK(t.collective_from == "columns");
  const std::string rs_row =
      "  1024  32  float  sum  -1  20.0  0.05  0.09  0  20.0  0.05  0.09  0\n";
  CHECK(one(devices(8, 8) + kHeader + rs_row).collective == "reduce_scatter");
  const std::string bcast_row =
      "  1024  256  float  none  0  20.0  0.05  0.05  0  20.0  0.05  0.05  0\n";
  CHECK(one(devices(8, 8) + kHeader + bcast_row).collective == "broadcast");
  // all_gather and all_to_all print the same columns: ambiguous, the error asks for --collective.
  const std::string ag_row =
      "  1024  32  float  none  -1  20.0  0.05  0.05  0  20.0  0.05  0.05  0\n";
  const std::string why = error_of(devices(8, 8) + kHeader + ag_row, "run.log");
  CHECK_THAT(why, Catch::Contains("run.log:") && Catch::Contains("--collective") &&
                      Catch::Contains("all_gather or all_to_all"));
  // sendrecv_perf prints its op like all_reduce; its busbw equals its algbw (all_reduce's is
  // 2(n-1)/n of it, the same only on 2 ranks).
  const std::string sendrecv_row =
      "  1048576  262144  float  sum  -1  20.0  52.43  52.43  0  20.0  52.43  52.43  0\n";
  CHECK(one(devices(8, 8) + kHeader + sendrecv_row).collective == "sendrecv");
  CHECK(one(devices(2, 8) + kHeader + sendrecv_row).collective ==
        "all_reduce");  // 2 ranks: the same columns
}

TEST_CASE("hypercube_perf's blank redop column", "[nccl_tests_log]") {
  // nccl-tests' hypercube prints no redop (blank), then root -1: the row has one token fewer.
  const std::string rows =
      "     1048576        32768     float              -1   120.00    7.65    7.65       0   "
      "120.00    7.65    7.65       0\n"
      "     2097152        65536     float              -1   121.00   15.29   15.29       0   "
      "120.50   15.29   15.29       0\n";
  const NcclTestsTable named =
      one(devices(8, 8) + "# Collective test starting: hypercube_perf\n" + kHeader + rows);
  CHECK(named.collective == "hypercube");
  REQUIRE(named.rows.size() == 2);
  CHECK(named.rows[0].redop.empty());
  CHECK(named.rows[0].redop_blank);
  CHECK(named.rows[0].root == -1);
  CHECK(named.rows[1].out_of_place->time_us == Approx(121.0));
  CHECK(named.rows[1].in_place->time_us == Approx(120.5));
  const NcclTestsTable guessed = one(devices(8, 8) + kHeader + rows);
  CHECK(guessed.collective == "hypercube");
  CHECK(guessed.collective_from == "columns");
}

TEST_CASE("pre-2022 and very old layouts", "[nccl_tests_log]") {
  const NcclTestsTable ar = one(devices(8, 8) +
                                "#       size         count    type   redop     time   algbw   "
                                "busbw  error     time   algbw   busbw  error\n"
                                "           8             2   float     sum    38.50    0.00    "
                                "0.00  2e-07    37.10    0.00    0.00  0e+00\n"
                                "        1024           256   float     sum    40.00    0.03    "
                                "0.04  1e+00*   39.00    0.03    0.05  0e+00\n");
  REQUIRE(ar.rows.size() == 2);
  CHECK(ar.collective == "all_reduce");
  CHECK(ar.rows[0].out_of_place->wrong == Approx(2e-7));
  CHECK(ar.rows[1].out_of_place->wrong == Approx(1.0));
  CHECK(ar.rows[0].root == -1);
  const NcclTestsTable ag = one(devices(8, 8) +
                                    "#       size         count    type     time   algbw   busbw  "
                                    "error     time   algbw   busbw  error\n"
                                    "        1024            32   float    20.00    0.05    0.04  "
                                    "0e+00    20.00    0.05    0.04  0e+00\n",
                                "old_all_gather.log");
  CHECK(ag.collective == "all_gather");
  CHECK(ag.rows[0].redop.empty());
  CHECK(ag.rows[0].in_place->time_us == Approx(20.0));
  const NcclTestsTable old =
      one("# bytes N type op time algbw busbw res time algbw busbw res\n"
          "   Rank  0 Pid 1821213 on HOST device  0 [0x00] Tesla V100\n"
          "   Rank  1 Pid 1821213 on HOST device  1 [0x00] Tesla V100\n"
          "1048576 262144 float sum 60.1 17.4 17.4 N/A 59.0 17.8 17.8 N/A\n",
          "v100_allreduce.log");
  CHECK(old.ranks == 2);
  CHECK(old.nodes == 1);
  CHECK_FALSE(old.rows[0].out_of_place->wrong.has_value());
}

TEST_CASE("launcher prefixes, noise lines, timestamps, per-iteration and cputime columns",
          "[nccl_tests_log]") {
  const std::string row = "8 2 float sum -1 40.12 0.00 0.00 0 38.85 0.00 0.00 0";
  const NcclTestsTable srun =
      one(" 0: # Using devices\n 0: #  Rank  0 Group  0 Pid  1 on  a device  0 [0x07] H100\n"
          " 1: #  Rank  1 Group  0 Pid  2 on  b device  0 [0x07] H100\n 0: " +
              row + "\n 0:\n",
          "x_all_reduce.log");
  CHECK(srun.ranks == 2);
  CHECK(srun.nodes == 2);
  CHECK(srun.rows.size() == 1);
  const NcclTestsTable ompi =
      one("[1,0]<stdout>:# Using devices\n[1,0]<stdout>:#  Rank  0 Group  0 Pid  1 on a device  0 "
          "[0x07] H100\n"
          "[1,0]<stdout>:" +
              row +
              "\n8 more processes have sent help message help-mtl-ofi.txt / OFI call fail\n"
              "[bm-h100-01:29250] Set MCA parameter \"orte_base_help_aggregate\" to 0\n"
              "Run-1 Starting command at 2025-05-22 07:36:17\n[1,0]<stdout>:" +
              row + "\r\n",
          "all_reduce.log");
  CHECK(ompi.rows.size() == 2);
  const NcclTestsTable stamped = one(
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong timestamp\n" +
          row + "  2025-05-22 07:36:17\n",
      "all_reduce.log");
  CHECK(stamped.rows.at(0).in_place->time_us == Approx(38.85));
  const NcclTestsTable iters =
      one("# Per-Iteration Report: enabled\n"
          "#  size count type redop root time algbw busbw #wrong i_min i_max i_p99 i_cv% time "
          "algbw busbw #wrong i_min i_max i_p99 i_cv%\n"
          "8 2 float sum -1 40.12 0.00 0.00 0 39.0 44.0 43.9 2.1 38.85 0.00 0.00 0 38.0 40.0 39.9 "
          "1.2\n",
          "all_reduce.log");
  CHECK(iters.rows.at(0).in_place->time_us == Approx(38.85));
  CHECK(iters.rows.at(0).out_of_place->busbw_gbps == Approx(0.0));
  const NcclTestsTable cpu =
      one("#  size count type redop root cputime algbw busbw #wrong cputime algbw busbw #wrong\n" +
              row + "\n",
          "all_reduce.log");
  CHECK(cpu.rows.at(0).out_of_place->time_us == Approx(40.12));
  // Trace replay / in-place only: the out-of-place block printed blank.
  const NcclTestsTable ip = one(
      std::string(kHeader) + "8 2 float sum -1                                 38.85 0.00 0.00 0\n",
      "all_reduce.log");
  CHECK_FALSE(ip.rows.at(0).out_of_place.has_value());
  CHECK(ip.rows.at(0).in_place->time_us == Approx(38.85));
}

TEST_CASE(
    "truncated device blocks leave ranks unknown unless given, and several runs give several "
    "tables",
    "[nccl_tests_log]") {
  const std::string row = "8 2 float sum -1 40.12 0.00 0.00 0 38.85 0.00 0.00 0\n";
  const std::string cut =
      "# Using devices\n#  Rank  0 Group  0 Pid  1 on a device  0 [0x07] H100\n#  ...\n" +
      std::string(kHeader) + row;
  const NcclTestsTable t = one(cut, "all_reduce.log");
  CHECK(t.devices_truncated);
  CHECK(t.ranks == 0);
  NcclTestsParseOptions o;
  o.ranks = 16;
  o.nodes = 2;
  const NcclTestsTable given = one(cut, "all_reduce.log", o);
  CHECK(given.ranks == 16);
  CHECK(given.nodes == 2);
  const std::string two =
      "# Collective test starting: all_reduce_perf\n# nThread 1\n" + devices(8, 8) + kHeader + row +
      "# Avg bus bandwidth    : 0.0\n#\n# Collective test concluded: all_reduce_perf\n"
      "# Collective test starting: broadcast_perf\n# nThread 1\n" +
      devices(16, 8) + kHeader +
      "8 2 float none 0 10.0 0.00 0.00 0 10.0 0.00 0.00 0\n16 4 float none 0 10.0 0.00 0.00 0 10.0 "
      "0.00 0.00 0\n";
  const std::vector<NcclTestsTable> runs = parse_nccl_tests_output(two, "two.log");
  REQUIRE(runs.size() == 2);
  CHECK(runs[0].collective == "all_reduce");
  CHECK(runs[0].ranks == 8);
  CHECK(runs[0].complete);
  CHECK(runs[1].collective == "broadcast");
  CHECK(runs[1].ranks == 16);
  CHECK(runs[1].nodes == 2);
  CHECK(runs[1].rows.size() == 2);
  CHECK(runs[1].rows[1].root == 0);
  CHECK_FALSE(runs[1].complete);
}

TEST_CASE("nccl-tests -J JSON output", "[nccl_tests_log]") {
  const std::string json = R"({"version": 3, "start_time": "2025-06-01 10:00:00",
    "args": ["./build/reduce_scatter_perf", "-b", "8", "-e", "1M", "-J", "out.json"], "env": ["NCCL_ALGO=Ring"],
    "nccl_version": 22602,
    "config": {"nthreads": 1, "ngpus": 1, "devices": [
      {"rank": 0, "group": 0, "pid": 1, "hostname": "n0", "device": 0, "device_hex": "0000:19:00", "device_info": "NVIDIA H100"},
      {"rank": 1, "group": 0, "pid": 2, "hostname": "n0", "device": 1, "device_hex": "0000:3b:00", "device_info": "NVIDIA H100"},
      {"rank": 2, "group": 0, "pid": 3, "hostname": "n1", "device": 0, "device_hex": "0000:19:00", "device_info": "NVIDIA H100"},
      {"rank": 3, "group": 0, "pid": 4, "hostname": "n1", "device": 1, "device_hex": "0000:3b:00", "device_info": "NVIDIA H100"}]},
    "results": [
      {"size": 1024, "count": 64, "type": "bfloat16", "redop": "sum", "root": "    -1",
       "out_of_place": {"time": 21.5, "alg_bw": 0.05, "bus_bw": 0.04, "nwrong": 0},
       "in_place": {"time": 20.5, "alg_bw": 0.05, "bus_bw": 0.04, "nwrong": null}, "actual_iterations": 20},
      {"size": 0, "count": 0, "type": "bfloat16", "redop": "sum", "root": "-1", "out_of_place": null,
       "in_place": {"cpu_time": 1.0, "alg_bw": 0, "bus_bw": 0, "nwrong": 0}}],
    "out_of_bounds": {"count": 0, "okay": true}, "average_bus_bandwidth": {"bandwidth": 0.04, "okay": "unchecked"}})";
  const NcclTestsTable t = one(json, "rs.json");
  CHECK(t.collective == "reduce_scatter");
  CHECK(t.collective_from == "program name");
  CHECK(t.ranks == 4);
  CHECK(t.nodes == 2);
  CHECK(t.nccl_version == "2.26.2");
  CHECK(t.dtype == DataType::bfloat16);
  CHECK(t.complete);
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0].out_of_place->time_us == Approx(21.5));
  CHECK(t.rows[0].out_of_place->wrong == Approx(0));
  CHECK_FALSE(t.rows[0].in_place->wrong.has_value());
  CHECK_FALSE(t.rows[1].out_of_place.has_value());
  CHECK(t.rows[1].in_place->time_us == Approx(1.0));
  std::string nan = json;
  nan.replace(nan.find("21.5"), 4, "\"nan\"");
  CHECK_THAT(error_of(nan, "rs.json"),
             Catch::Contains("rs.json:1: results[0].out_of_place.time is nan"));
  CHECK_THAT(error_of("{\"results\": " + std::string(100000, '[') + std::string(100000, ']') + "}",
                      "deep.json"),
             Catch::Contains("nesting"));
  CHECK_THAT(error_of("{\"results\": [{\"size\": 8}]}", "x.json"),
             Catch::Contains("needs size, count and type"));
  CHECK_THAT(error_of("{\"results\": [", "x.json"), Catch::Contains("not valid JSON"));
}

TEST_CASE("hostile inputs give a ConfigError naming the file, the line and the text",
          "[nccl_tests_log]") {
  const std::string row = "8 2 float sum -1 40.12 0.00 0.00 0 38.85 0.00 0.00 0\n";
  CHECK_THAT(error_of("", "empty.log"), Catch::Contains("empty.log: no nccl-tests result rows"));
  CHECK_THAT(error_of("hello\nworld\n"), Catch::Contains("no nccl-tests result rows"));
  CHECK_THAT(
      error_of(std::string(kHeader) + "8 2 float sum -1 nan 0.00 0.00 0 38.85 0.00 0.00 0\n"),
      Catch::Contains("bad.log:4: time 'nan' is not a finite number"));
  CHECK_THAT(
      error_of(std::string(kHeader) + "8 2 float sum -1 1e999 0.00 0.00 0 38.85 0.00 0.00 0\n"),
      Catch::Contains("bad.log:4:"));
  // Finite but over the cap: the message states the range, not "not finite".
  CHECK_THAT(
      error_of(std::string(kHeader) + "8 2 float sum -1 1e300 0.00 0.00 0 38.85 0.00 0.00 0\n"),
      Catch::Contains("bad.log:4: time '1e300' is not a finite number in 0..1e15"));
  CHECK_THAT(
      error_of(std::string(kHeader) + "8 2 quux sum -1 40.12 0.00 0.00 0 38.85 0.00 0.00 0\n"),
      Catch::Contains("unknown data type 'quux'"));
  CHECK_THAT(error_of(std::string(kHeader) + "8 2 float sum -1 40.12 0.00 0.00 0 38.85\n"),
             Catch::Contains("bad.log:4: a row that does not fit the column header at line 2"));
  CHECK_THAT(
      error_of(std::string(kHeader) + "99999999999999999999999 2 float sum -1 1 0 0 0 1 0 0 0\n"),
      Catch::Contains("bad.log:4:"));
  CHECK_THAT(error_of(std::string(kHeader) +
                      "8 2 float sum -1 40.12 0.00 0.00 0 38.85 0.00 0.00 0 trailing\n"),
             Catch::Contains("does not fit"));
  const std::string long_line(kNcclTestsMaxLineBytes + 1, '7');
  const std::string why = error_of(long_line);
  CHECK_THAT(why, Catch::Contains("bad.log:1: a line of"));
  CHECK(why.size() < 400);
  const std::string binary = std::string(kHeader) +
                             "8 2 fl\x01\xff"
                             "oat sum -1 40.12 0.00 0.00 0 38.85 0.00 0.00 0\n";
  CHECK_THAT(error_of(binary), Catch::Contains("\\x01\\xff"));
  std::string many;
  for (std::size_t i = 0; i <= kNcclTestsMaxRows; ++i) many += row;
  CHECK_THAT(error_of(many), Catch::Contains("more than 100000 result rows"));
  CHECK_THAT(error_of("#  Rank 99999999999 Group 0 Pid 1 on h device 0 [0x0] H100\n" + row),
             Catch::Contains("bad rank"));
  CHECK_THAT(error_of("# Collective test starting: frob_perf\n" + row),
             Catch::Contains("unknown nccl-tests program"));
}
