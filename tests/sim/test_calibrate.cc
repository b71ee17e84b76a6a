// Calibration (sim/calibrate.h): fitted on a one-node and a two-node all_reduce sweep, the
// NVLink and NIC rates of a cluster come back; a fit the logs cannot determine is refused naming
// the sweep to measure.
#include <catch2/catch.hpp>
#include <cmath>

#include "twinccl/errors.h"
#include "twinccl/sim/calibrate.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
// An nccl-tests table as the parser returns it, its times predicted on `truth` (-g 1).
NcclTestsTable sweep(const topo::Topology& truth, int ranks, const char* source) {
  NcclTestsTable t;
  t.source = source;
  t.collective = "all_reduce";
  t.kind = OpKind::all_reduce;
  t.ranks = ranks;
  t.gpus_per_thread = 1;
  int line = 1;
  for (std::size_t bytes = 8; bytes <= (std::size_t{1} << 30); bytes *= 4) {
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.nranks = ranks;
    r.spec.count = std::max<std::size_t>(1, bytes / 4);
    r.gpus_per_thread = 1;
    NcclTestsRow row;
    row.size_bytes = r.spec.count * 4;
    row.count = r.spec.count;
    row.line = line++;
    row.out_of_place = NcclTestsBlock{};
    row.out_of_place->time_us = predict(truth, r).time_us;
    t.rows.push_back(row);
  }
  return t;
}

topo::Topology edited(const char* preset, double nvlink_gbps, double nic_gbps) {
  topo::TopologyEdits e;
  e.settings.push_back({"nvlink_gbps", nvlink_gbps});
  e.settings.push_back({"nic_gbps", nic_gbps});
  return topo::apply_edits(topo::load_topology(preset), e).topology;
}
}  // namespace

TEST_CASE("calibrate: a one-node and a two-node sweep give the NVLink and NIC rates back") {
  // The "real" cluster: 4 DGX H100 with NVLink at 80% and NICs at 35 GB/s; measured on 1 and 2
  // nodes, predicted on 4.
  const topo::Topology truth = edited("h100-cluster-4", 0.8 * 370.8, 35.0);
  const std::vector<NcclTestsTable> logs = {sweep(truth, 8, "1node.log"),
                                            sweep(truth, 16, "2node.log")};
  const Calibration c = calibrate(topo::load_topology("h100-cluster-4"), logs);
  REQUIRE(c.moved.size() == 2);
  CHECK(c.moved[0].name == "nvlink_gbps");
  CHECK(c.moved[0].before == Approx(370.8));
  CHECK(c.moved[0].after == Approx(0.8 * 370.8).epsilon(0.02));
  CHECK(c.moved[1].name == "nic_gbps");
  // NCCL's inter-node speeds (Hopper: ... 40, 30 ...) make 35 GB/s and every rate in [30, 40)
  // predict alike: the fit lands in that bracket.
  CHECK(c.moved[1].after >= 30.0);
  CHECK(c.moved[1].after <= 40.0);
  double worst_before = 0.0;
  for (const CalibrationResidual& r : c.residuals) {
    if (r.regime != "bandwidth") continue;
    worst_before = std::max(worst_before, std::abs(r.before));
    CHECK(std::abs(r.after) < 0.02);  // the fitted topology is right where it was fitted
  }
  CHECK(worst_before > 0.05);  // the preset was not
  // Measure two nodes, predict four: the fitted topology's 32-rank 1 GiB time is the truth's.
  const NcclTestsTable predicted = sweep(c.topology, 32, "p");
  const NcclTestsTable actual = sweep(truth, 32, "a");
  CHECK(predicted.rows.back().out_of_place->time_us ==
        Approx(actual.rows.back().out_of_place->time_us).epsilon(0.02));
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
}
