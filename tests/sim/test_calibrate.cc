// Calibration (sim/calibrate.h): fitted on a one-node and a two-node all_reduce sweep, the
// NVLink and NIC rates, the host launch and the network hop's extra latency of a cluster come
// back; a fit the logs cannot determine is refused naming the sweep to measure.
#include <catch2/catch.hpp>
#include <cmath>

#include "calibrate_sweep.h"
#include "twinccl/errors.h"
#include "twinccl/sim/calibrate.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
using calibrate_test::edited;
using calibrate_test::sweep;
}  // namespace

TEST_CASE("calibrate: a one-node and a two-node sweep give the NVLink and NIC rates back") {
  // The "real" cluster: 4 DGX H100 with NVLink at 80%, NICs at 21 GB/s, a host that launches in
  // 9 us and a network hop 15 us slower than NCCL's; measured on 1 and 2 nodes, predicted on 4.
  // (NICs at 35 GB/s would hide behind NVLink on 2 nodes: the next test.)
  const topo::Topology truth = edited("h100-cluster-4", 0.8 * 370.8, 21.0, 9.0, 15.0);
  const std::vector<NcclTestsTable> logs = {sweep(truth, 8, "1node.log"),
                                            sweep(truth, 16, "2node.log")};
  const Calibration c = calibrate(topo::load_topology("h100-cluster-4"), logs);
  REQUIRE(c.moved.size() == 4);
  CHECK(c.moved[0].name == "nvlink_gbps");
  CHECK(c.moved[0].before == Approx(370.8));
  CHECK(c.moved[0].after == Approx(0.8 * 370.8).epsilon(0.02));
  CHECK(c.moved[1].name == "nic_gbps");
  // NCCL's inter-node speeds (Hopper: ... 24, 22, 20 ...) make 21 GB/s and every rate in
  // [20, 22) predict alike: the fit lands in that bracket.
  CHECK(c.moved[1].not_determined.empty());
  CHECK(c.moved[1].after >= 20.0);
  CHECK(c.moved[1].after <= 22.0);
  CHECK(c.moved[2].name == "host_launch_us");
  CHECK(c.moved[2].before == Approx(5.0));
  CHECK(c.moved[2].after == Approx(9.0).epsilon(0.05));
  CHECK(c.moved[3].name == "network_hop_extra_us");
  CHECK(c.moved[3].before == 0.0);
  CHECK(c.moved[3].after == Approx(15.0).epsilon(0.05));
  double worst_before = 0.0, worst_latency_before = 0.0;
  for (const CalibrationResidual& r : c.residuals) {
    INFO(r.log << " " << r.regime << ": " << r.before * 100 << "% -> " << r.after * 100 << "%");
    CHECK(std::abs(r.after) < 0.02);  // the fitted topology is right where it was fitted
    if (r.regime == "bandwidth") worst_before = std::max(worst_before, std::abs(r.before));
    if (r.regime == "latency") {
      worst_latency_before = std::max(worst_latency_before, std::abs(r.before));
    }
  }
  CHECK(worst_before > 0.05);          // the preset was not
  CHECK(worst_latency_before > 0.10);  // nor in the latency regime
  // Measure two nodes, predict four: the fitted topology's 32-rank 1 GiB time is the truth's.
  const NcclTestsTable predicted = sweep(c.topology, 32, "p");
  const NcclTestsTable actual = sweep(truth, 32, "a");
  CHECK(predicted.rows.back().out_of_place->time_us ==
        Approx(actual.rows.back().out_of_place->time_us).epsilon(0.02));
}

TEST_CASE("calibrate: a NIC that no row sees is refused, naming the sweep that shows it") {
  // NICs at 35 GB/s behind NVLink at 80%: on 2 nodes NVLS-tree's in-node stage (one node's NVLS
  // rate, 218 GB/s algbw) bounds every row >= 64 MiB, so any NIC from ~32 GB/s up predicts the
  // 2-node log alike; the search's end there is no fit (it stayed at the preset's 50, and
  // predicted 4 nodes 20% fast). On 4 nodes the tree's NICs bound it: with that sweep it fits.
  const topo::Topology truth = edited("h100-cluster-4", 0.8 * 370.8, 35.0, 9.0, 15.0);
  std::vector<NcclTestsTable> logs = {sweep(truth, 8, "1node.log"), sweep(truth, 16, "2node.log")};
  const topo::Topology preset = topo::load_topology("h100-cluster-4");
  const Calibration two = calibrate(preset, logs);
  REQUIRE(two.moved.size() == 4);
  CHECK(two.moved[1].name == "nic_gbps");
  CHECK(two.moved[1].after == two.moved[1].before);  // the preset's, kept and said
  CHECK_THAT(two.moved[1].not_determined, Catch::Contains("not determined") &&
                                              Catch::Contains("4 or more nodes") &&
                                              Catch::Contains("mpirun -np 32 -N 8"));
  CHECK(two.moved[0].after == Approx(0.8 * 370.8).epsilon(0.02));  // NVLink still fits
  logs.push_back(sweep(truth, 32, "4node.log"));
  const Calibration c = calibrate(preset, logs);
  REQUIRE(c.moved.size() == 4);
  CHECK(c.moved[1].name == "nic_gbps");
  CHECK(c.moved[1].not_determined.empty());
  CHECK(c.moved[1].after >= 30.0);  // NCCL's speeds 30, 40: [30, 40) predict alike
  CHECK(c.moved[1].after <= 40.0);
}

TEST_CASE("calibrate: logs that cannot determine a parameter are refused, naming the sweep") {
  const topo::Topology t = topo::load_topology("h100-cluster-2");
  const std::vector<NcclTestsTable> one = {sweep(t, 8, "1node.log")};
  CHECK_THROWS_WITH(calibrate(t, one), Catch::Contains("nic_gbps") &&
                                           Catch::Contains("two-node sweep") &&
                                           Catch::Contains("mpirun -np 16 -N 8"));
  const std::vector<NcclTestsTable> two = {sweep(t, 16, "2node.log")};
  CHECK_THROWS_WITH(calibrate(t, two),
                    Catch::Contains("nvlink_gbps") && Catch::Contains("one-node sweep"));
  NcclTestsTable unknown = sweep(t, 8, "x.log");
  unknown.ranks = 0;
  CHECK_THROWS_AS(calibrate(t, {unknown, sweep(t, 16, "2node.log")}), ConfigError);
  // Sweeps from 64 MiB say nothing of the latencies: refused naming the launch, unless only the
  // bandwidths are asked for; a two-node sweep without small rows cannot give the network hop.
  const std::size_t big = std::size_t{64} << 20;
  const std::vector<NcclTestsTable> large = {sweep(t, 8, "1node.log", "", big),
                                             sweep(t, 16, "2node.log", "", big)};
  CHECK_THROWS_WITH(calibrate(t, large),
                    Catch::Contains("host_launch_us") && Catch::Contains("one-node sweep") &&
                        Catch::Contains("-b 8 ") && Catch::Contains("--bandwidth-only"));
  CHECK(calibrate(t, large, {.latencies = false}).moved.size() == 2);
  CHECK_THROWS_WITH(calibrate(t, {sweep(t, 8, "1node.log"), sweep(t, 16, "2node.log", "", big)}),
                    Catch::Contains("network_hop_extra_us") && Catch::Contains("two-node sweep"));
}

TEST_CASE("calibrate: a one-node -g 8 log fits NVLink and the thread's per-GPU launch, no NIC") {
  // 8 H100s whose host launches a call in 3 us (the H200 hosts' `-g 8` rows suggest under 3.5).
  topo::TopologyEdits e;
  e.settings.push_back({"group_launch_us", 3.0});
  const topo::Topology truth = topo::apply_edits(topo::load_topology("dgx-h100"), e).topology;
  NcclTestsTable g8 = sweep(truth, 8, "g8.log");
  g8.gpus_per_thread = 8;  // one thread launching 8 GPUs: 8 x 3 us per call at small sizes
  for (NcclTestsRow& row : g8.rows) {
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.nranks = 8;
    r.spec.count = row.count;
    r.gpus_per_thread = 8;
    row.out_of_place->time_us = predict(truth, r).time_us;
  }
  const Calibration c = calibrate(topo::load_topology("dgx-h100"), {g8});
  REQUIRE(c.moved.size() == 2);  // nvlink_gbps and the -g 8 thread's per-GPU launch, no NIC
  CHECK(c.moved[1].name == "group_launch_us");
  CHECK(c.moved[1].after == Approx(3.0).epsilon(0.03));
}

// A fitted topology is the same machine: the network's class (EFA's per-hop cost), the HBM figure
// and the fitted latency facts survive the edits and a topology file (they were lost by --set
// before: an edited aws-p5e-2 was InfiniBand with the arch's memory).
TEST_CASE("calibrate: the fitted topology keeps the network class, memory and latency facts") {
  const topo::Topology p5e = topo::load_topology("aws-p5e-2");
  const topo::Topology truth = edited("aws-p5e-2", 370.8, 50.0, 7.0, 4.0);
  CHECK(truth.facts().network == topo::NetworkClass::efa);
  CHECK(truth.facts().memory_gbps == 4800.0);
  const Calibration c =
      calibrate(p5e, {sweep(truth, 8, "1node.log"), sweep(truth, 16, "2node.log")});
  const topo::Topology file = topo::topology_from_json(topo::to_json(c.topology), "p5e.json");
  for (const topo::Topology* t : {&c.topology, &file}) {
    CHECK(t->facts().network == topo::NetworkClass::efa);
    CHECK(t->facts().memory_gbps == 4800.0);
    CHECK(t->facts().host_launch_us == Approx(7.0).epsilon(0.05));
    CHECK(t->facts().network_hop_extra_us == Approx(4.0).epsilon(0.1));
  }
}

TEST_CASE("calibrate: NVLink from the ring rows of a log, not from NCCL's NVLS price") {
  // One GB300 rack with NVLink at 80%: 4 GPUs run ring (NCCL ranks NVLS last there), 8 GPUs run
  // NVLS, here 6% faster or slower than its price at that link (an NVLS efficiency the link does
  // not set). The ring rows' rate steps with NCCL's speed list, so they bound the link to a
  // bracket ([~540, ~650) GB/s here); the NVLS rows do not choose within it.
  const double nvlink = 721.8;
  topo::TopologyEdits e;
  e.settings.push_back({"nvlink_gbps", 0.8 * nvlink});
  const topo::Topology preset = topo::load_topology("gb300-nvl72-cluster-1x64");
  const topo::Topology truth = topo::apply_edits(preset, e).topology;
  const NcclTestsTable ring = sweep(truth, 4, "1tray.log", "", std::size_t{64} << 20);
  const auto nvls_at = [&](double efficiency) {
    NcclTestsTable t = sweep(truth, 8, "2tray.log", "", std::size_t{64} << 20);
    for (NcclTestsRow& row : t.rows) row.out_of_place->time_us /= efficiency;
    return t;
  };
  const Calibration fast = calibrate(preset, {ring, nvls_at(1.06)}, {.latencies = false}),
                    slow = calibrate(preset, {ring, nvls_at(0.94)}, {.latencies = false});
  REQUIRE(fast.moved.size() == 1);
  REQUIRE(slow.moved.size() == 1);
  INFO(fast.moved[0].fitted_on);
  CHECK_THAT(fast.moved[0].fitted_on,
             Catch::Contains("3 one-node rows of ring") && Catch::Contains("3 of NVLS"));
  CHECK(fast.moved[0].after == Approx(slow.moved[0].after));
  for (const NcclTestsRow& row : ring.rows) {  // in the ring rows' bracket
    const Request r = request_of(ring, row);
    CHECK(predict(fast.topology, r).time_us == Approx(row.out_of_place->time_us).epsilon(0.005));
  }
  // The NVLS rows alone (8 H100s have no ring rows) still fit it, to their own error.
  const Calibration alone = calibrate(preset, {nvls_at(1.06)}, {.latencies = false});
  REQUIRE(alone.moved.size() == 1);
  CHECK(alone.moved[0].fitted_on.empty());
  CHECK(alone.moved[0].after == Approx(1.06 * 0.8 * nvlink).epsilon(0.02));
}
