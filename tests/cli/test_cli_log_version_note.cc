// `compare` and `calibrate` say where a log's NCCL version is not the one its rows were priced
// with (older than the model's oldest tuning model, or unreadable): in compare's table, JSON and
// CSV and in calibrate's report; and --ranks stops at the bound device lines have.
#include <catch2/catch.hpp>
#include <cctype>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/cli_runner.h"
#include "twinccl/sim/nccl_tests_log.h"

using twinccl_test::run_cli;

namespace {

std::string log_path(const std::string& name) {
  return std::string(TWINCCL_SOURCE_DIR) + "/tests/fidelity/logs/" + name;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Two H100 ranks of one node, one 8-byte all_reduce row; line 2 is NCCL's version line.
std::string two_rank_log(const std::string& version) {
  return "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor)\n"
         "node-a:1:1 [0] NCCL INFO NCCL version " +
         version +
         "\n# Using devices\n"
         "#  Rank  0 Group  0 Pid  1 on     node-a device  0 [0x19] NVIDIA H100 80GB HBM3\n"
         "#  Rank  1 Group  0 Pid  2 on     node-a device  1 [0x19] NVIDIA H100 80GB HBM3\n"
         "#       size         count      type   redop    root     time   algbw   busbw #wrong"
         "     time   algbw   busbw #wrong\n"
         "           8             2     float     sum      -1    30.10    0.00    0.00      0"
         "    30.00    0.00    0.00      0\n";
}

}  // namespace

TEST_CASE("compare notes an NCCL version older than the tuning model in table, JSON and CSV",
          "[cli][compare][nccl_version]") {
  const twinccl_test::ScratchDir scratch("twinccl-version-note");
  scratch.write("old.log", two_rank_log("2.8.4+cuda11.2"));
  const std::string log = scratch.path("old.log");
  const std::string note = "NCCL version 2.8.4+cuda11.2 at " + log +
                           ":2 is older than the oldest tuning model (2.9.0); priced as 2.9.0";
  const auto table = run_cli("compare " + log + " --topology dgx-h100");
  INFO(table.out);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Catch::Contains("\n# note: " + note + "\n"));
  const auto json = run_cli("compare " + log + " --topology dgx-h100 --format json");
  REQUIRE(json.exit_code == 0);
  CHECK_THAT(json.out, Catch::Contains("\"nccl_version_note\": \"" + note + "\""));
  const auto csv = run_cli("compare " + log + " --topology dgx-h100 --format csv");
  REQUIRE(csv.exit_code == 0);
  std::istringstream lines(csv.out);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  CHECK_THAT(header, Catch::EndsWith(
                         ",nccl_proto_from,nccl_version_note,forced_algorithm,forced_protocol"));
  CHECK_THAT(row, Catch::StartsWith("row,") && Catch::EndsWith("," + note + ",,"));
  // The log's own version: no note anywhere.
  scratch.write("own.log", two_rank_log("2.26.2+cuda12.8"));
  const auto own = run_cli("compare " + scratch.path("own.log") + " --topology dgx-h100");
  REQUIRE(own.exit_code == 0);
  CHECK_THAT(own.out, !Catch::Contains("# note:"));
  const auto own_json =
      run_cli("compare " + scratch.path("own.log") + " --topology dgx-h100 --format json");
  CHECK_THAT(own_json.out, Catch::Contains("\"nccl_version_note\": null"));
  CHECK_THAT(own_json.out, Catch::Contains("\"nccl_version_library\": \"NCCL\""));
}

TEST_CASE("calibrate notes an old and an unreadable NCCL version in its report",
          "[cli][nccl_version]") {
  const twinccl_test::ScratchDir scratch("twinccl-version-note-cal");
  // issue 290's node log with NCCL's version line in front; issue 309's 2-node log (line 22 is
  // "NCCL version 2.26.2+cuda12.8") with it garbled.
  scratch.write("one.log", "NCCL version 2.8.4\n" +
                               read_text(log_path("issue290-h100-1node-all_reduce-nvls.log")));
  std::string two = read_text(log_path("issue309-h100-xe9680-2node-all_reduce-8B-16G.log"));
  const std::size_t at = two.find("NCCL version 2.26.2+cuda12.8");
  REQUIRE(at != std::string::npos);
  two.replace(at, 28, "NCCL version 2.x");
  scratch.write("two.log", two);
  const std::string one_log = scratch.path("one.log"), two_log = scratch.path("two.log");
  const auto fit =
      run_cli("calibrate " + one_log + " " + two_log +
              " --topology h100-cluster-4 --bandwidth-only -o " + scratch.path("fit.json"));
  INFO(fit.out);
  REQUIRE(fit.exit_code == 0);
  CHECK_THAT(fit.out, Catch::Contains(
                          "# note: NCCL version 2.8.4 at " + one_log +
                          ":1 is older than the oldest tuning model (2.9.0); priced as 2.9.0\n"));
  CHECK_THAT(fit.out, Catch::Contains("# note: unreadable NCCL version '2.x' at " + two_log +
                                      ":22; priced as the newest model (NCCL 2.30.3 and later)\n"));
}

TEST_CASE("compare --ranks takes up to kNcclTestsMaxRanks, the device lines' bound",
          "[cli][compare][ranks]") {
  const twinccl_test::ScratchDir scratch("twinccl-ranks-bound");
  scratch.write("run.log", two_rank_log("2.26.2"));
  const std::string base = "compare " + scratch.path("run.log") + " --topology dgx-h100 --ranks ";
  const std::string bound = std::to_string(twinccl::sim::kNcclTestsMaxRanks);
  const auto at = run_cli(base + bound);  // taken, then refused: more ranks than the topology
  CHECK(at.exit_code == 2);
  CHECK_THAT(at.out, Catch::Contains(bound + " ranks on 1 node(s), more than the 8 GPUs"));
  const auto past = run_cli(base + std::to_string(twinccl::sim::kNcclTestsMaxRanks + 1));
  CHECK(past.exit_code != 0);
  CHECK_THAT(past.out, Catch::Contains("--ranks") && !Catch::Contains("more than the 8 GPUs"));
}

TEST_CASE("compare prices an rccl-tests log as the NCCL its RCCL tracks, and says so",
          "[cli][compare][nccl_version][rccl]") {
  // AMD's ROCm blog log: "RCCL version : 2.22.3-develop:f5b15f2" at line 13. Before: not read,
  // the title named no version and the rows were priced with the newest model, unsaid.
  const std::string log = log_path("amd-mi300x-1node-all_reduce-mpi8-rocmblog.log");
  const auto table = run_cli("compare " + log + " --topology mi300x-8");
  INFO(table.out);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out,
             Catch::Contains("float32, RCCL 2.22.3-develop:f5b15f2; one GPU per host thread"));
  CHECK_THAT(table.out,
             Catch::Contains("\n# note: RCCL version 2.22.3-develop:f5b15f2 at " + log +
                             ":13 is priced as NCCL 2.22.3, the NCCL release it tracks"));
  const auto json = run_cli("compare " + log + " --topology mi300x-8 --format json");
  REQUIRE(json.exit_code == 0);
  CHECK_THAT(json.out, Catch::Contains("\"nccl_version_library\": \"RCCL\""));
  // The model's version-dependent terms are NVIDIA's (NVLS, Blackwell): the same log without the
  // line gets the same predictions, row for row.
  const twinccl_test::ScratchDir scratch("twinccl-rccl-version");
  std::string text = read_text(log);
  const std::size_t at = text.find("RCCL version : ");
  REQUIRE(at != std::string::npos);
  text.erase(at, text.find('\n', at) + 1 - at);
  scratch.write("no-version.log", text);
  const auto bare = run_cli("compare " + scratch.path("no-version.log") + " --topology mi300x-8");
  REQUIRE(bare.exit_code == 0);
  const auto rows = [](const std::string& out) {
    std::string kept;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      // A row starts with its size (a summary line with the log's name, a header with '#').
      const std::size_t first = line.find_first_not_of(' ');
      if (first != std::string::npos && std::isdigit(static_cast<unsigned char>(line[first])))
        kept += line + "\n";
    }
    return kept;
  };
  CHECK(rows(table.out).size() > 100);
  CHECK(rows(table.out) == rows(bare.out));
}
