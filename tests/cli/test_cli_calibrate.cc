// `twinccl calibrate`: the real program fits a preset to published logs (tests/fidelity/logs,
// provenance in SOURCES.md), writes a topology file `compare` takes, and refuses a fit the logs
// cannot determine with exit 2, naming the sweep to measure.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "cli/cli_runner.h"

using twinccl_test::run_cli;

namespace {
std::string log_path(const std::string& name) {
  return std::string(TWINCCL_SOURCE_DIR) + "/tests/fidelity/logs/" + name;
}
}  // namespace

TEST_CASE("calibrate: fits, prints what moved, writes a topology file compare takes", "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-cal");
  const std::string out = scratch.path("fit.json");
  const std::string one = log_path("issue290-h100-1node-all_reduce-nvls.log");
  const std::string two = log_path("issue309-h100-xe9680-2node-all_reduce-8B-16G.log");
  // issue 290's node log starts at 128 MiB: it says nothing of the launch, so the latency fit is
  // refused naming the sweep, and --bandwidth-only fits the rates.
  const auto latencies =
      run_cli("calibrate " + one + " " + two + " --topology h100-cluster-4 -o " + out);
  CHECK(latencies.exit_code == 2);
  CHECK_THAT(latencies.out, Catch::Contains("host_launch_us") && Catch::Contains("-b 8 "));
  CHECK_FALSE(std::filesystem::exists(out));
  const auto fit = run_cli("calibrate " + one + " " + two + " --topology h100-cluster-4 -o " + out +
                           " --bandwidth-only");
  INFO(fit.out);
  REQUIRE(fit.exit_code == 0);
  CHECK_THAT(fit.out, Catch::Contains("nvlink_gbps") && Catch::Contains("nic_gbps") &&
                          Catch::Contains("bandwidth") && Catch::Contains("wrote"));
  REQUIRE(std::filesystem::exists(out));
  const auto use = run_cli("compare " + log_path("issue309-h100-vm-4node-all_reduce-8B-16G.log") +
                           " --topology " + out);
  INFO(use.out);
  CHECK(use.exit_code == 0);
  std::filesystem::remove(out);
  // One node alone: the NICs cannot be fitted; refused, naming the sweep.
  const auto refused = run_cli("calibrate " + one + " --topology h100-cluster-4 -o " + out);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.out, Catch::Contains("two-node sweep") && Catch::Contains("nic_gbps"));
  CHECK_FALSE(std::filesystem::exists(out));
}

// Logs published without their device block (OCI's MI355X tables, cut to 8 and 16 GiB) name
// their ranks and nodes per log, in order; a count that does not match the logs is refused.
TEST_CASE("calibrate: --ranks / --nodes per log for logs without a device block", "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-cal-ranks");
  const std::string out = scratch.path("fit.json");
  const std::string logs = log_path("oci-mi355x-pollara-1node-all_reduce-8G-16G.log") + " " +
                           log_path("oci-mi355x-pollara-2node-all_reduce-8G-16G.log") +
                           " --topology mi325x-roce-4 --bandwidth-only -o " + out;
  const auto unknown = run_cli("calibrate " + logs);
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.out, Catch::Contains("how many ranks") && Catch::Contains("--ranks"));
  const auto short_list = run_cli("calibrate " + logs + " --ranks 8");
  CHECK(short_list.exit_code == 2);
  CHECK_THAT(short_list.out, Catch::Contains("1 value(s) for 2 log(s)"));
  CHECK_FALSE(std::filesystem::exists(out));
  const auto fit = run_cli("calibrate " + logs + " --ranks 8,16 --nodes 1,2");
  INFO(fit.out);
  REQUIRE(fit.exit_code == 0);
  CHECK_THAT(fit.out, Catch::Contains("nvlink_gbps") && Catch::Contains("wrote"));
}

// A run with NCCL_ALGO=Ring whose published log starts at "# nThread" (issue 309, SOURCES.md:
// `mpirun ... -x NCCL_ALGO=Ring`) is priced as a ring when the user says so, one --algo per log;
// the fit report says which algorithm priced each log. A miscount or an unknown name is refused.
TEST_CASE("calibrate: --algo per log prices a forced-ring log as a ring", "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-cal-algo");
  const std::string out = scratch.path("fit.json");
  const std::string logs = log_path("issue290-h100-1node-all_reduce-nvls.log") + " " +
                           log_path("issue309-h100-ib400-2node-all_reduce-ring-minctas24.log") +
                           " --topology h100-cluster-4 --bandwidth-only -o " + out;
  const auto one = run_cli("calibrate " + logs + " --algo Ring");
  CHECK(one.exit_code == 2);
  CHECK_THAT(one.out, Catch::Contains("--algo given 1 time(s) for 2 log(s)") &&
                          Catch::Contains("--algo - --algo Ring"));
  const auto typo = run_cli("calibrate " + logs + " --algo - --algo Rnig");
  CHECK(typo.exit_code == 2);
  CHECK_THAT(typo.out, Catch::Contains("unknown algorithm 'Rnig'") && Catch::Contains("NVLSTree"));
  CHECK_FALSE(std::filesystem::exists(out));
  const auto fit = run_cli("calibrate " + logs + " --algo - --algo Ring");
  INFO(fit.out);
  REQUIRE(fit.exit_code == 0);
  CHECK_THAT(fit.out,
             Catch::Contains("issue290-h100-1node-all_reduce-nvls.log priced with "
                             "NCCL's choice") &&
                 Catch::Contains("minctas24.log priced with ring (NCCL_ALGO=Ring (--algo))"));
}

// A log named by a long path (here the repository's own, longer than the 48 characters the log
// column had) does not push the regime / rows / before / after columns out of line.
TEST_CASE("calibrate: the residual table stays aligned under a long log path", "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-cal-align");
  const std::string one = log_path("oci-mi355x-pollara-1node-all_reduce-8G-16G.log");
  REQUIRE(one.size() > 48);
  const auto fit = run_cli(
      "calibrate " + one + " " + log_path("oci-mi355x-pollara-2node-all_reduce-8G-16G.log") +
      " --topology mi355x-roce-2 --bandwidth-only --ranks 8,16 --nodes 1,2 -o " +
      scratch.path("fit.json"));
  INFO(fit.out);
  REQUIRE(fit.exit_code == 0);
  CHECK(twinccl_test::column_aligned(fit.out, "# log ", "regime", "bandwidth"));
}

// "Measure two nodes, predict four": a file fitted on mi355x-roce-2 holds 2 nodes. The 4-node log
// on it alone is refused, naming the file's own family at 4 nodes and how to carry the fit there
// (--set nodes=4), not another machine's cluster (it said h100-cluster-4); with --set nodes=4 the
// file grows from mi355x-roce-4 with its fitted settings and predicts the 4-node log.
TEST_CASE("calibrate: a fitted file asked for more nodes names its own preset", "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-cal-family");
  const std::string out = scratch.path("fit.json");
  const std::string four = log_path("oci-mi355x-pollara-4node-all_reduce-8G-16G.log");
  const auto fit =
      run_cli("calibrate " + log_path("oci-mi355x-pollara-1node-all_reduce-8G-16G.log") + " " +
              log_path("oci-mi355x-pollara-2node-all_reduce-8G-16G.log") +
              " --topology mi355x-roce-2 --bandwidth-only --ranks 8,16 --nodes 1,2 -o " + out);
  REQUIRE(fit.exit_code == 0);
  const auto preset = run_cli("compare " + four + " --ranks 32 --nodes 4 --topology mi355x-roce-2");
  CHECK(preset.exit_code == 2);
  CHECK_THAT(preset.out, Catch::Contains("use mi355x-roce-4") && !Catch::Contains("h100"));
  const auto file = run_cli("compare " + four + " --ranks 32 --nodes 4 --topology " + out);
  CHECK(file.exit_code == 2);
  CHECK_THAT(file.out, Catch::Contains("use mi355x-roce-4") &&
                           Catch::Contains("add --set nodes=4 (it builds mi355x-roce-4") &&
                           Catch::Contains("calibrate` again with --topology mi355x-roce-4") &&
                           !Catch::Contains("h100"));
  const auto grown =
      run_cli("compare " + four + " --ranks 32 --nodes 4 --topology " + out + " --set nodes=4");
  CHECK(grown.exit_code == 0);
  CHECK_THAT(grown.out, Catch::Contains("mi355x-roce-4 (this family at 4 nodes) with this "
                                        "topology's settings nvlink_gbps=") &&
                            Catch::Contains("bandwidth      2     +0.7%"));
  // Racks: the 2-rack GB300 log on the one-rack preset names the 2-rack one.
  const auto racks =
      run_cli("compare " + log_path("oci-gb300-32tray-2rack-all_reduce-512K-16G.log") +
              " --ranks 128 --nodes 2 --topology gb300-nvl72-cluster-1x64");
  CHECK(racks.exit_code == 2);
  CHECK_THAT(racks.out, Catch::Contains("use gb300-nvl72-cluster-2x64"));
}
