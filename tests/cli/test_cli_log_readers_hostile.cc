// `compare` and `calibrate` on hostile input, as a user runs them (issue 24's hostile pass over
// the log readers): each ends at once with exit 2 and one line naming the file, the line or the
// flag and the value; nothing is fitted first and no file is written.
#include <catch2/catch.hpp>
#include <string>

#include "cli_runner.h"

using Catch::Matchers::Contains;
using twinccl_test::CliResult;
using twinccl_test::run_cli;
using twinccl_test::ScratchDir;

namespace {

constexpr int kLimitS = 10;

std::string log_path(const std::string& name) {
  return std::string(TWINCCL_SOURCE_DIR) + "/tests/fidelity/logs/" + name;
}

// An 8-rank log of 50001 rows: two of them pass the readers' 100000-row cap over all logs.
std::string just_over_half_the_row_cap() {
  std::string rows = "# Using devices\n";
  for (int r = 0; r < 8; ++r)
    rows += "#  Rank " + std::to_string(r) + " Group 0 Pid 1 on a device 0 [0x19] H100\n";
  for (int i = 0; i < 50001; ++i) rows += "8 2 float sum -1 20 0 0 0 20 0 0 0\n";
  return rows;
}

}  // namespace

TEST_CASE("calibrate -o with a file name too long is refused before the fit",
          "[cli][hostile][calibrate]") {
  // Before: the fit ran and was printed, then "cannot put the written file in place: File name
  // too long", exit 1.
  const std::string name = "\"$(head -c 300 /dev/zero | tr '\\0' a).json\"";
  const CliResult r = run_cli("calibrate " + log_path("issue290-h100-1node-all_reduce-nvls.log") +
                                  " --topology dgx-h100 --bandwidth-only -o " + name,
                              "", kLimitS);
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Contains("--output 'aaaa") && Contains("File name too long"));
  CHECK_THAT(r.out, !Contains("# calibrate"));
}

TEST_CASE("compare: the rows of all logs together are capped, not only each file's",
          "[cli][hostile][compare]") {
  // Before: each file was capped at 100000 rows, the logs together not: memory grew with them.
  const ScratchDir d("twinccl-log-rows");
  d.write("half.log", just_over_half_the_row_cap());
  const CliResult r =
      run_cli("compare " + d.path("half.log") + " " + d.path("half.log") + " --topology dgx-h100",
              "", kLimitS);
  INFO(r.out.substr(0, 400));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out,
             Contains("more than 100000 result rows over the logs (at ") && Contains("half.log)"));
  CHECK(r.out.size() < 600);
}

TEST_CASE("calibrate: the rows of all logs together are capped as compare's, before the fit",
          "[cli][hostile][calibrate]") {
  // Before: calibrate read each log alone, so the cap over all logs never counted them together;
  // only the fit's 10000-row cap refused them, after every log was parsed.
  const ScratchDir d("twinccl-calibrate-rows");
  d.write("half.log", just_over_half_the_row_cap());
  const CliResult r = run_cli("calibrate " + d.path("half.log") + " " + d.path("half.log") +
                                  " --topology dgx-h100 -o " + d.path("out.json"),
                              "", kLimitS);
  INFO(r.out.substr(0, 400));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out,
             Contains("more than 100000 result rows over the logs (at ") && Contains("half.log)"));
}

TEST_CASE("compare: NCCL_ALGO lists in a log as NCCL reads them", "[cli][hostile][compare]") {
  // Before: "NCCL_ALGO set by environment to Ring," was refused (unknown algorithm ''), and an
  // unknown prefix ("allredcue:Ring", which NCCL refuses) was ignored.
  const ScratchDir d("twinccl-log-algo");
  const std::string body =
      "# Using devices\n"
      "#  Rank 0 Group 0 Pid 1 on a device 0 [0x19] H100\n"
      "#  Rank 1 Group 0 Pid 1 on a device 1 [0x19] H100\n"
      "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
      "  1048576  262144  float  sum  -1  20.0  0.00  0.00  0  20.0  0.00  0.00  0\n";
  d.write("comma.log", "h:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring,\n" + body);
  const CliResult comma =
      run_cli("compare " + d.path("comma.log") + " --topology dgx-h100", "", kLimitS);
  INFO(comma.out);
  CHECK(comma.exit_code == 0);
  CHECK_THAT(comma.out, Contains("ring/"));
  d.write("prefix.log", "NCCL_ALGO=allredcue:Ring\n" + body);
  const CliResult prefix =
      run_cli("compare " + d.path("prefix.log") + " --topology dgx-h100", "", kLimitS);
  INFO(prefix.out);
  CHECK(prefix.exit_code == 2);
  CHECK_THAT(prefix.out,
             Contains("prefix.log (line 1)") && Contains("unknown collective prefix 'allredcue'"));
}

TEST_CASE("calibrate: a negative --ranks or --nodes is refused, not read as the log's own",
          "[cli][hostile][calibrate]") {
  // Before: --ranks -5 and --nodes -1 were read as 0 (the log's own): the fit ran, exit 0.
  const std::string run = "calibrate " + log_path("issue290-h100-1node-all_reduce-nvls.log") +
                          " --topology dgx-h100 --bandwidth-only -o /nonexistent-dir/x.json ";
  for (const std::string flag : {"--ranks -5", "--nodes -1"}) {
    const CliResult r = run_cli(run + flag, "", kLimitS);
    INFO(r.out);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Contains(flag.substr(0, 7)) && Contains("not in range 0 to 1048576"));
  }
}
