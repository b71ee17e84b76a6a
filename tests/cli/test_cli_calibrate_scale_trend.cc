// `twinccl calibrate` on logs of three node counts prints the trend of its bandwidth error with
// the node count, and warns only where the topology is larger than the logs (calibrate.h
// CalibrationScaleTrend). The logs: nccl-tests#309's H100 cluster at 2, 4 and 8 nodes, with the
// one-node H100 log of nccl-tests#290 (another host: this checks what is printed, not the fit;
// the trend's figures are judged on Together's clusters in tests/fidelity).
#include <catch2/catch.hpp>
#include <string>

#include "cli/cli_runner.h"

using twinccl_test::run_cli;

namespace {
std::string logs() {
  const std::string dir = std::string(TWINCCL_SOURCE_DIR) + "/tests/fidelity/logs/";
  std::string all = dir + "issue290-h100-1node-all_reduce-nvls.log";
  for (const char* n : {"2", "4", "8"})
    all += " " + dir + "issue309-h100-ib400-" + n + "node-all_reduce-default.log";
  return all;
}
}  // namespace

TEST_CASE("calibrate: logs of 2, 4 and 8 nodes print the error's trend with the nodes", "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-cal-trend");
  const auto at16 = run_cli("calibrate " + logs() + " -t h100-cluster-16 --bandwidth-only -o " +
                            scratch.path("h100-16.json"));
  INFO(at16.out);
  REQUIRE(at16.exit_code == 0);
  CHECK_THAT(at16.out, Catch::Contains("# with the node count (2, 4, 8 nodes;") &&
                           Catch::Contains("per doubling of nodes; at the topology's 16 nodes") &&
                           Catch::Contains("beyond the logs' 8 nodes") &&
                           !Catch::Contains("# beyond the logs:"));  // the trend says it
  // On the logs' own largest node count the trend is printed, with no warning beyond them.
  const auto at8 = run_cli("calibrate " + logs() + " -t h100-cluster-8 --bandwidth-only -o " +
                           scratch.path("h100-8.json"));
  INFO(at8.out);
  REQUIRE(at8.exit_code == 0);
  CHECK_THAT(at8.out, Catch::Contains("at the topology's 8 nodes"));
  CHECK_THAT(at8.out, !Catch::Contains("beyond the logs'"));
  // --scale-trend carries it into the file as the NICs' delivered share, listed and written.
  const std::string carried_file = scratch.path("h100-16-trend.json");
  const auto carried =
      run_cli("calibrate " + logs() + " -t h100-cluster-16 --bandwidth-only --scale-trend -o " +
              carried_file);
  INFO(carried.out);
  REQUIRE(carried.exit_code == 0);
  CHECK_THAT(carried.out, Catch::Contains("  nic_delivered_share") &&
                              Catch::Contains("set from the trend with the node count") &&
                              !Catch::Contains("beyond the logs'"));
  const auto shown = run_cli("topo show " + carried_file);
  INFO(shown.out);
  CHECK_THAT(shown.out, Catch::Contains("NIC share 0.9"));
}

TEST_CASE("calibrate: logs of 1 and 2 nodes print no trend, and say what a larger topology assumes",
          "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-cal-trend2");
  const std::string dir = std::string(TWINCCL_SOURCE_DIR) + "/tests/fidelity/logs/";
  const std::string mi355x = "calibrate " + dir +
                             "oci-mi355x-pollara-1node-all_reduce-8G-16G.log " + dir +
                             "oci-mi355x-pollara-2node-all_reduce-8G-16G.log --ranks 8,16 "
                             "--nodes 1,2 -t mi325x-roce-4 --bandwidth-only";
  const auto fit = run_cli(mi355x + " -o " + scratch.path("mi.json"));
  INFO(fit.out);
  REQUIRE(fit.exit_code == 0);
  CHECK_THAT(fit.out, !Catch::Contains("with the node count"));
  // A topology beyond the logs' 2 nodes: the fitted NIC rate is carried there unchecked, and
  // calibrate says so, naming the sweep that would check it; on the logs' own 2 nodes it is not.
  CHECK_THAT(fit.out, Catch::Contains("# beyond the logs: the NIC rate is fitted on 2 nodes") &&
                          Catch::Contains("the topology's 4 nodes") &&
                          Catch::Contains("on 4 nodes too (e.g. `mpirun -np 32 -N 8"));
  const std::string at_2_nodes =
      std::string(mi355x).replace(mi355x.find("mi325x-roce-4"), 13, "mi325x-roce-2");
  const auto fit2 = run_cli(at_2_nodes + " -o " + scratch.path("mi2.json"));
  INFO(fit2.out);
  REQUIRE(fit2.exit_code == 0);
  CHECK_THAT(fit2.out, !Catch::Contains("beyond the logs"));
  const auto carried = run_cli(mi355x + " --scale-trend -o " + scratch.path("mi-trend.json"));
  INFO(carried.out);
  CHECK(carried.exit_code != 0);
  CHECK_THAT(carried.out,
             Catch::Contains("--scale-trend") && Catch::Contains("3 or more node counts"));
}
