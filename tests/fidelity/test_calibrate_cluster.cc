// `twinccl calibrate` on published logs of ONE cluster at 1, 2 and more nodes (provenance:
// tests/fidelity/logs/SOURCES.md): fit on its 1- and 2-node all_reduce logs, judge the fit on its
// larger runs, which it did not see. Three public sets, and what each shows (docs/fidelity.md,
// "Calibration on one cluster"):
//  * OCI MI355X (Pollara 400G NICs), 1 / 2 / 4 nodes, 8 and 16 GiB rows only, logs cut to those
//    rows without their device block: no MI355X preset, so the fit starts from mi325x-roce and
//    moves the xGMI rate (+25%); the 4-node rows are predicted within 10%.
//  * OCI GB300 NVL72, 1 / 2 / 16 trays of one rack and 32 trays over 2 racks, 512 KiB - 16 GiB:
//    the 1-tray log's ring rows fit the NVLink rate (the 2-tray NVLS rows do not: NCCL's price),
//    the 16-tray rows stay 8% fast (the middle sizes of NVLS over 64 GPUs: the model's ramp is
//    short); the 2-rack NIC rate is refused: no log crosses racks.
//  * nccl-tests#309's 8-node H100 InfiniBand cluster, 2 / 4 / 8 nodes and no one-node log:
//    refused, naming the one-node sweep.
// Only all_reduce: none of the three sets publishes all_gather or reduce_scatter (Together AI's
// B200 clusters, which do at 4 - 64 nodes: test_calibrate_cluster_figures.cc).
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "twinccl/errors.h"
#include "twinccl/sim/calibrate.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
// `ranks` / `nodes` for logs whose device block is cut (0 = the log's own).
std::vector<NcclTestsTable> cluster_log(const char* file, int ranks = 0, int nodes = 0) {
  std::ifstream in(std::string(TWINCCL_FIDELITY_LOGS) + "/" + file);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  NcclTestsParseOptions parse;
  parse.ranks = ranks;
  parse.nodes = nodes;
  return parse_nccl_tests_file_text(text.str(), file, parse);
}

std::vector<NcclTestsTable> joined(std::vector<NcclTestsTable> a, std::vector<NcclTestsTable> b) {
  for (NcclTestsTable& t : b) a.push_back(std::move(t));
  return a;
}

// Geometric-mean error of predicted / measured time over the log's rows >= 64 MiB on `t`.
double bandwidth_error(const topo::Topology& t, const std::vector<NcclTestsTable>& log) {
  double sum = 0.0;
  int rows = 0;
  for (const NcclTestsTable& table : log) {
    for (const NcclTestsRow& row : table.rows) {
      if (row.size_bytes < (std::size_t{64} << 20) || !row.out_of_place) continue;
      const double error = predict(t, request_of(table, row)).time_us / row.out_of_place->time_us;
      INFO(table.source << " " << row.size_bytes << " B: " << (error - 1.0) * 100 << "%");
      CHECK(std::abs(error - 1.0) < 0.5);  // a parse slip (wrong ranks) shows here first
      sum += std::log(error);
      ++rows;
    }
  }
  REQUIRE(rows > 0);
  return std::exp(sum / rows) - 1.0;
}

double moved(const Calibration& c, const char* name) {
  for (const CalibratedParameter& p : c.moved) {
    if (p.name == name) return p.after / p.before;
  }
  FAIL("calibrate did not fit " << name);
  return 0.0;
}
}  // namespace

TEST_CASE("calibrate on one OCI MI355X cluster: fitted on 1 and 2 nodes, its 4 nodes within 10%") {
  const auto one = cluster_log("oci-mi355x-pollara-1node-all_reduce-8G-16G.log", 8, 1);
  const auto two = cluster_log("oci-mi355x-pollara-2node-all_reduce-8G-16G.log", 16, 2);
  const auto four = cluster_log("oci-mi355x-pollara-4node-all_reduce-8G-16G.log", 32, 4);
  const topo::Topology preset = topo::load_topology("mi325x-roce-4");
  // Published without the device block: the ranks must be given, and the refusal says so.
  CHECK_THROWS_WITH(calibrate(preset, cluster_log("oci-mi355x-pollara-1node-all_reduce-8G-16G.log"),
                              {.latencies = false}),
                    Catch::Contains("how many ranks"));
  const Calibration c = calibrate(preset, joined(one, two), {.latencies = false});
  // MI355X's xGMI is faster than the MI325X preset's: the one-node rows (+22% slow on the
  // preset's 7 x 48 GB/s rings; +36% on NCCL's 5 x 60 before the mesh round) pull nvlink_gbps up;
  // the 2-node rows, NIC-bound, leave nic_gbps where it was.
  CHECK(moved(c, "nvlink_gbps") > 1.15);
  CHECK(moved(c, "nic_gbps") == Approx(1.0).margin(0.05));
  for (const CalibratedParameter& p : c.moved) {  // seen by the rows, not kept for want of them
    INFO(p.name << ": " << p.not_determined);
    CHECK(p.not_determined.empty());
  }
  const double one_before = bandwidth_error(preset, one),
               one_after = bandwidth_error(c.topology, one);
  INFO("1 node: " << one_before * 100 << "% -> " << one_after * 100 << "%");
  CHECK(one_before > 0.15);
  CHECK(std::abs(one_after) < 0.05);
  // The 2-node rows sit between two of NCCL's speed steps (3.4% fast at the one nic_gbps keeps):
  // what the step leaves is fitted as the NICs' delivered share.
  const double two_after = bandwidth_error(c.topology, two);
  INFO("2 nodes, fitted: " << two_after * 100 << "%");
  CHECK(std::abs(two_after) <= 0.01);
  CHECK(moved(c, "nic_delivered_share") < 0.98);
  // The 4-node run, not seen by the fit: within 10% after (and before: it is NIC-bound); within
  // 2% with the share (+0.6% when written; -2.9% with the step alone).
  const double four_after = bandwidth_error(c.topology, four);
  INFO("4 nodes, fitted: " << four_after * 100 << "%");
  CHECK(std::abs(four_after) <= 0.02);
}

TEST_CASE("calibrate on one OCI GB300 rack: 1 tray's ring fits NVLink, 16 trays within 10%") {
  const auto one = cluster_log("oci-gb300-1tray-all_reduce-512K-16G.log");
  const auto two = cluster_log("oci-gb300-2tray-1rack-all_reduce-512K-16G.log", 8, 1);
  const auto sixteen = cluster_log("oci-gb300-16tray-1rack-all_reduce-512K-16G.log", 64, 1);
  // One rack is one NVLink domain (a "node" of the preset): the trays' logs are one-node logs.
  // The GB300 preset (gb200's rack with ConnectX-8 NICs) predicts these one-rack rows as gb200's.
  const topo::Topology rack = topo::load_topology("gb300-nvl72-cluster-1x64");
  const Calibration c = calibrate(rack, joined(one, two));
  const double before = bandwidth_error(rack, sixteen),
               after = bandwidth_error(c.topology, sixteen);
  INFO("16 trays: " << before * 100 << "% -> " << after * 100 << "%");
  // NVLink is fitted on the 1-tray log's ring rows (4 GPUs: NCCL ranks NVLS last there), which
  // run on the link; the 2-tray log's NVLS rows are NCCL's NVLS price, read on its own view of the
  // link, and do not fit it (docs/fidelity.md, "Calibration fits the link on the rows that run on
  // it"). The ring rows sit within one step of NCCL's speed list: the preset's rate stays.
  CHECK(moved(c, "nvlink_gbps") == Approx(1.0).margin(0.005));
  CHECK_THAT(c.moved.front().fitted_on,
             Catch::Contains("9 one-node rows of ring") && Catch::Contains("9 of NVLS"));
  // -8.3% before, -8.1% after (the launch fit: +2.45 us a call). It was -10.3% when the 2-tray
  // NVLS rows moved NVLink +2.6%: the 16 GiB row then came right (+2.7% -> +0.1%) and the 64 MiB -
  // 2 GiB ramp, which no 1- or 2-tray row shows, further off.
  CHECK(std::abs(before) < 0.10);
  CHECK(std::abs(after) <= 0.10);
  CHECK(std::abs(after) <= std::abs(before));
  // Two racks: the trays' logs never cross the scale-out network, so its rate is refused,
  // naming the sweep (64 GPUs of each of two racks).
  CHECK_THROWS_WITH(calibrate(topo::load_topology("gb300-nvl72-cluster-2x64"), joined(one, two)),
                    Catch::Contains("nic_gbps") && Catch::Contains("-N 64"));
}

TEST_CASE("calibrate on nccl-tests#309's 8-node H100 cluster: no one-node log, refused") {
  // 2, 4 and 8 nodes of one cluster (hosts 0666a154, b749a9b0, ...), no one-node run published.
  const auto two = cluster_log("issue309-h100-ib400-2node-all_reduce-default.log");
  REQUIRE(two.size() == 1);
  CHECK(two[0].ranks == 16);
  CHECK_THROWS_WITH(calibrate(topo::load_topology("h100-cluster-8"), two, {.latencies = false}),
                    Catch::Contains("nvlink_gbps") && Catch::Contains("one-node sweep"));
  // On the preset the 2-node NVLS-tree rows are within 2% (the 4- and 8-node ring rows are 15%
  // fast: docs/fidelity.md).
  CHECK(std::abs(bandwidth_error(topo::load_topology("h100-cluster-8"), two)) < 0.02);
}

TEST_CASE(
    "calibrate on the 2-node preset, then --set nodes=4: the 4-node prediction of a fit "
    "on the 4-node preset") {
  // The user's path (README): `calibrate 1n.log 2n.log -t mi325x-roce-2 -o my.json`, then
  // `perf --topology my.json --set nodes=4`: the file grows from its family's preset with the
  // settings its name records (topologies/src/topology_regrow.h), as if calibrated on the 4-node
  // preset, instead of being refused.
  const auto one = cluster_log("oci-mi355x-pollara-1node-all_reduce-8G-16G.log", 8, 1);
  const auto two = cluster_log("oci-mi355x-pollara-2node-all_reduce-8G-16G.log", 16, 2);
  const auto four = cluster_log("oci-mi355x-pollara-4node-all_reduce-8G-16G.log", 32, 4);
  const Calibration on_two =
      calibrate(topo::load_topology("mi325x-roce-2"), joined(one, two), {.latencies = false});
  const Calibration on_four =
      calibrate(topo::load_topology("mi325x-roce-4"), joined(one, two), {.latencies = false});
  const auto path = std::filesystem::temp_directory_path() / "twinccl-calibrated-2node.json";
  topo::save_topology_json(on_two.topology, path);
  topo::TopologyEdits four_nodes;
  four_nodes.settings.push_back(topo::parse_setting("nodes=4"));
  const topo::Topology grown =
      topo::apply_edits(topo::load_topology_json(path), four_nodes).topology;
  std::filesystem::remove(path);
  CHECK(grown.node_count() == 4);
  CHECK(bandwidth_error(grown, four) == Approx(bandwidth_error(on_four.topology, four)));
  CHECK(std::abs(bandwidth_error(grown, four)) <= 0.02);
}
