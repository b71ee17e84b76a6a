// `twinccl compare`: the real program on published nccl-tests logs (real measurements copied
// verbatim, provenance in tests/fidelity/logs/SOURCES.md), its formats and its errors.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_runner.h"
#include "support/forced_ring_log.h"

using twinccl_test::run_cli;

namespace {

std::string log_path(const std::string& name) {
  auto dir = std::filesystem::path(__FILE__).parent_path() / ".." / "fidelity" / "logs";
  for (auto p = std::filesystem::current_path();
       !std::filesystem::exists(dir) && p != p.parent_path(); p = p.parent_path()) {
    dir = p / "tests" / "fidelity" / "logs";
  }
  return (dir / name).string();
}

// True when one line of `out` holds every part, in order.
bool has_line(const std::string& out, std::initializer_list<std::string> parts) {
  std::size_t begin = 0;
  while (begin < out.size()) {
    const std::size_t end = std::min(out.find('\n', begin), out.size());
    const std::string line = out.substr(begin, end - begin);
    std::size_t at = 0;
    bool all = true;
    for (const std::string& p : parts) {
      at = line.find(p, at);
      if (at == std::string::npos) {
        all = false;
        break;
      }
      at += p.size();
    }
    if (all) return true;
    begin = end + 1;
  }
  return false;
}

const std::string kTwoNode = "issue309-h100-xe9680-2node-all_reduce-8B-16G.log";
const std::string kOneNode = "a100-sxm4-80gb-1node-all_reduce-g8.log";

}  // namespace

TEST_CASE("compare prints measured vs predicted per row and the error per size regime",
          "[cli][compare]") {
  const auto r = run_cli("compare " + log_path(kTwoNode) + " --topology h100-cluster-2");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(
      r.out,
      Catch::Contains(
          "# twinccl compare: nccl-tests measurements vs the simulator's analytic prediction on "
          "h100-cluster-2"));
  CHECK_THAT(
      r.out,
      Catch::Contains(
          "all_reduce (from the file name), 16 ranks on 2 node(s), float32, NCCL 2.26.2+cuda12.8"));
  // The first and the last measured rows, with the measured out-of-place time and busbw.
  CHECK_THAT(r.out, Catch::Contains(
                        "             8            2   float32    sum    -1       68.52     0.00"));
  CHECK_THAT(r.out, Catch::Contains(
                        "   17179869184   4294967296   float32    sum    -1    68652.00   469.21"));
  CHECK(has_line(r.out, {"  " + kTwoNode, " all_reduce ", " latency ", " 17 ", "%", "%"}));
  CHECK(has_line(r.out, {"  " + kTwoNode, " all_reduce ", " middle ", " 6 ", "%", "%"}));
  CHECK(has_line(r.out, {"  " + kTwoNode, " all_reduce ", " bandwidth ", " 9 ", "%", "%"}));
  const auto in_place =
      run_cli("compare " + log_path(kTwoNode) + " --topology h100-cluster-2 --in-place");
  CHECK_THAT(in_place.out, Catch::Contains("    -1       24.70     0.00"));
}

TEST_CASE("compare on two logs adds a summary over all logs, and csv and json carry the same rows",
          "[cli][compare]") {
  const std::string logs =
      log_path(kOneNode) + " " + log_path("a100-sxm4-80gb-1node-all_reduce-mpi8.log");
  const auto table = run_cli("compare " + logs + " --topology dgx-a100");
  INFO(table.out);
  REQUIRE(table.exit_code == 0);
  CHECK(has_line(table.out, {"  all ", " all_reduce ", " bandwidth ", " 14 ", "%",
                             "%"}));  // 7 rows >= 64 MiB each
  const auto json = run_cli("compare " + logs + " --topology dgx-a100 --format json");
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  REQUIRE(j["tables"].size() == 2);
  CHECK(j["tables"][0]["rows"].size() == 30);
  CHECK(j["tables"][0]["rows"][0]["measured"]["time_us"].get<double>() == Approx(40.12));
  const double ratio = j["tables"][0]["rows"][29]["ratio"].get<double>();
  CHECK(j["tables"][0]["rows"][29]["predicted"]["time_us"].get<double>() == Approx(ratio * 32336));
  CHECK(j["summary"].size() == 9);  // 3 regimes x (2 logs + all)
  const auto csv = run_cli("compare " + log_path(kOneNode) +
                           " --topology dgx-a100 --format csv --algo ring --proto Simple");
  REQUIRE(csv.exit_code == 0);
  CHECK_THAT(csv.out, Catch::StartsWith("record,source,collective,ranks,nodes,regime,size_bytes"));
  CHECK_THAT(
      csv.out,
      Catch::Contains(
          ",all_reduce,8,1,bandwidth,4294967296,1073741824,float32,sum,-1,32336.000,232.4400,"));
  CHECK_THAT(csv.out, Catch::Contains(",ring,Simple,"));
  CHECK_THAT(csv.out, Catch::Contains("\nsummary,"));
}

TEST_CASE("compare predicts the host launch of the log's -g, and takes the run's channels",
          "[cli][compare]") {
  // The -g 8 log: one thread launches 8 GPUs, ~5 us each (nccl-tests issue 123), so a 32 KiB
  // all_reduce takes 8 x 5 us; the same log read as one GPU per thread takes the kernels + 5 us.
  const auto g8 = run_cli("compare " + log_path(kOneNode) + " --topology dgx-a100 --format json");
  const auto g1 =
      run_cli("compare " + log_path(kOneNode) + " --topology dgx-a100 --format json -g 1");
  REQUIRE(g8.exit_code == 0);
  REQUIRE(g1.exit_code == 0);
  const auto a = nlohmann::json::parse(g8.out)["tables"][0];
  const auto b = nlohmann::json::parse(g1.out)["tables"][0];
  CHECK(a["gpus_per_thread"] == 8);
  CHECK(b["gpus_per_thread"] == 1);
  const auto row = [](const nlohmann::json& t, std::size_t bytes) {
    for (const auto& r : t["rows"]) {
      if (r["size_bytes"].get<std::size_t>() == bytes) return r["predicted"];
    }
    FAIL("no row of " << bytes << " B");
    return nlohmann::json();
  };
  CHECK(row(a, 32768)["time_us"].get<double>() == Approx(40.0));
  CHECK(row(b, 32768)["time_us"].get<double>() < 30.0);
  CHECK(row(a, 32768)["algorithm"] == row(b, 32768)["algorithm"]);  // common to all: same choice
  const auto table = run_cli("compare " + log_path(kOneNode) + " --topology dgx-a100");
  CHECK_THAT(table.out, Catch::Contains("8 GPUs per host thread (-g 8)"));
  // The 2-node ring run forced NCCL_MIN_CTAS=24: --channels 24 predicts it as it ran.
  const std::string ring = log_path("issue309-h100-ib400-2node-all_reduce-ring-minctas24.log");
  const auto ch24 = run_cli("compare " + ring +
                            " --topology h100-cluster-2 --algo ring --channels 24 --format json");
  const auto ch0 =
      run_cli("compare " + ring + " --topology h100-cluster-2 --algo ring --format json");
  REQUIRE(ch24.exit_code == 0);
  REQUIRE(ch0.exit_code == 0);
  const double t24 =
      row(nlohmann::json::parse(ch24.out)["tables"][0], 67108864)["time_us"].get<double>();
  const double t0 =
      row(nlohmann::json::parse(ch0.out)["tables"][0], 67108864)["time_us"].get<double>();
  CHECK(t24 < t0);
  CHECK(std::abs(t24 / 433.8 - 1) < 0.10);  // the log's 433.8 us
  CHECK(run_cli("compare " + ring + " --topology h100-cluster-2 --channels 0").exit_code == 2);
  // Over NCCL's MAXCHANNELS (64): a usage error at once, not minutes of flow simulation.
  const auto many = run_cli(
      "compare " + ring + " --topology h100-cluster-2 --channels 1024 --fidelity flow", "", 20);
  CHECK(many.exit_code == 2);
  CHECK_THAT(many.out, Catch::Contains("--channels") && Catch::Contains("64"));
}

// A log whose file name is longer than the 48 characters the log column had (KeitaW's p5 log,
// 57) does not push the collective / regime / rows columns out of line.
TEST_CASE("compare's regime summary stays aligned under a long log name", "[cli][compare]") {
  const auto r =
      run_cli("compare " + log_path("aws-p5-2node-all_reduce-nccl2.22.3-ompi-tagged-8B-16G.log") +
              " --topology aws-p5-2");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(twinccl_test::column_aligned(r.out, "# log ", "collective", "all_reduce"));
}

// A multi-node log on a one-node preset is told that node's own cluster, not an H100 one: AMD's
// 2-node AAC log on mi300x-8, OCI's 2-rack GB300 log (64 GPUs of each rack) on gb300-nvl72.
TEST_CASE("compare names the one-node preset's own cluster for a larger log", "[cli][compare]") {
  const auto amd = run_cli("compare " + log_path("amd-mi300x-aac10-2node-all_reduce-mpi16.log") +
                           " -t mi300x-8");
  CHECK(amd.exit_code == 2);
  CHECK_THAT(amd.out, Catch::Contains("use mi300x-cluster-2") && !Catch::Contains("h100"));
  const auto racks =
      run_cli("compare " + log_path("oci-gb300-32tray-2rack-all_reduce-512K-16G.log") +
              " --ranks 128 --nodes 2 -t gb300-nvl72");
  CHECK(racks.exit_code == 2);
  CHECK_THAT(racks.out, Catch::Contains("use gb300-nvl72-cluster-2x64"));
  const auto h100 = run_cli(
      "compare " + log_path("issue309-h100-ib400-4node-all_reduce-default.log") + " -t dgx-h100");
  CHECK(h100.exit_code == 2);
  CHECK_THAT(h100.out, Catch::Contains("use h100-cluster-4"));
}

TEST_CASE("compare errors exit 2 and say what to do", "[cli][compare]") {
  const auto missing = run_cli("compare /nonexistent/run.log --topology dgx-h100");
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.out, Catch::Contains("/nonexistent/run.log"));
  const twinccl_test::ScratchDir scratch("twinccl-compare-bad");
  const std::string bad = scratch.path("bad.log");
  scratch.write("bad.log",
                "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
                "8 2 float sum -1 nan 0.00 0.00 0 38.85 0.00 0.00 0\n");
  const auto broken = run_cli("compare " + bad + " --topology dgx-h100");
  CHECK(broken.exit_code == 2);
  CHECK_THAT(broken.out, Catch::Contains(bad + ":2: time 'nan' is not a finite number"));
  const auto nodes = run_cli("compare " + log_path(kTwoNode) + " --topology dgx-h100");
  CHECK(nodes.exit_code == 2);
  CHECK_THAT(nodes.out, Catch::Contains("16 ranks on 2 node(s), more than the 8 GPUs") &&
                            Catch::Contains("h100-cluster-2"));
  const auto span =
      run_cli("compare " + log_path(kOneNode) + " --topology h100-cluster-2 --nodes 2");
  CHECK(span.exit_code == 2);
  CHECK_THAT(span.out, Catch::Contains("span 1 node(s)") &&
                           Catch::Contains("use a topology file with 2 node(s) holding 8 ranks "
                                           "(start one: `twinccl topo show h100-cluster-2 "
                                           "--format json -o mine.json`, then edit it"));
  CHECK(run_cli("compare " + log_path(kOneNode)).exit_code == 2);  // --topology is required
  CHECK(run_cli("compare " + log_path(kOneNode) + " --topology dgx-a100 --format xml").exit_code ==
        2);
}

// One rank: NCCL runs no algorithm (enqueue.cc ncclLaunchOneRank): perf labels the row
// one_rank/copy and times in place as the host's call alone; compare --in-place of that table
// predicts it back as one_rank/none. (The label was ring/LL and in place took the copy's time.)
TEST_CASE("one rank: perf and compare label NCCL's copy, nothing in place", "[cli][compare]") {
  const twinccl_test::ScratchDir scratch("twinccl-one-rank");
  const std::string log = scratch.path("one-rank.log");
  const auto perf =
      run_cli("perf all_reduce -b 512M -e 512M -c 0 --backend sim --topology dgx-h200 -g 1");
  INFO(perf.out);
  REQUIRE(perf.exit_code == 0);
  CHECK(has_line(perf.out, {"536870912", "253.55", "5.00", "one_rank/copy"}));
  scratch.write("one-rank.log", perf.out);
  const auto cmp = run_cli("compare " + log + " --topology dgx-h200 --in-place");
  INFO(cmp.out);
  CHECK(cmp.exit_code == 0);
  CHECK(has_line(cmp.out, {"536870912", "5.00", "5.00", "one_rank/none"}));
}

// A log whose run forced NCCL_ALGO (NCCL's INFO line, tuning.cc "NCCL_ALGO set by environment
// to %s") is predicted with that algorithm, and the JSON says what the log forced and where it
// was read; null for NCCL's own choice.
TEST_CASE("compare --format json names the log's NCCL_ALGO / NCCL_PROTO", "[cli][compare]") {
  const twinccl_test::ScratchDir scratch("twinccl-forced-ring");
  const std::string log = scratch.path("forced-ring.log");
  scratch.write("forced-ring.log", twinccl_test::forced_ring_log());  // two ranks on node-a
  const auto forced = run_cli("compare " + log + " --topology dgx-h100 --format json");
  INFO(forced.out);
  REQUIRE(forced.exit_code == 0);
  const auto t = nlohmann::json::parse(forced.out)["tables"][0];
  CHECK(t.at("nccl_algo") == "Ring");
  CHECK(t.at("nccl_algo_from") == "line 6");
  CHECK(t.at("nccl_proto").is_null());
  CHECK(t["rows"][0]["predicted"]["algorithm"] == "ring");
  const auto own = run_cli("compare " + log_path("issue290-h100-1node-all_reduce-nvls.log") +
                           " --topology dgx-h100 --format json");
  REQUIRE(own.exit_code == 0);
  CHECK(nlohmann::json::parse(own.out)["tables"][0].at("nccl_algo").is_null());
}

// --format csv carries the same NCCL_ALGO / NCCL_PROTO columns as JSON (empty = NCCL's choice):
// the log's own INFO lines on every row of its table; none on the summary records.
TEST_CASE("compare --format csv names the log's NCCL_ALGO / NCCL_PROTO", "[cli][compare]") {
  const twinccl_test::ScratchDir scratch("twinccl-forced-ring-csv");
  const std::string log = scratch.path("forced-ring.log");
  scratch.write("forced-ring.log", twinccl_test::forced_ring_log("node-a", "Simple"));
  const auto csv = run_cli("compare " + log + " --topology dgx-h100 --format csv");
  INFO(csv.out);
  REQUIRE(csv.exit_code == 0);
  std::istringstream lines(csv.out);
  std::string header, row, summary;
  std::getline(lines, header);
  std::getline(lines, row);
  std::getline(lines, summary);
  CHECK_THAT(header,
             Catch::EndsWith(
                 ",spread,nccl_algo,nccl_algo_from,nccl_proto,nccl_proto_from,nccl_version_note,"
                 "forced_algorithm,forced_protocol"));
  CHECK_THAT(row, Catch::StartsWith("row,") && Catch::Contains(",ring,Simple,") &&
                      Catch::EndsWith(",Ring,line 6,Simple,line 7,,,"));
  CHECK_THAT(summary, Catch::StartsWith("summary,") && Catch::EndsWith(",,,,,,,"));
  const auto own = run_cli("compare " + log_path("issue290-h100-1node-all_reduce-nvls.log") +
                           " --topology dgx-h100 --format csv");
  REQUIRE(own.exit_code == 0);
  const std::size_t first_row = own.out.find("\nrow,") + 1;
  REQUIRE(first_row > 0);
  // rows and spread (a summary's), the four columns, the version note, the forced names: empty.
  CHECK_THAT(own.out.substr(first_row, own.out.find('\n', first_row) - first_row),
             Catch::EndsWith(",,,,,,,,,") && !Catch::EndsWith(",,,,,,,,,,"));
}
