// Mechanism tests behind held-out cloud figures (issue 24). The figures themselves (AWS EFA, GCP
// TCPXO, AMD RoCE, GB200 NVL72, the `-g 8` middle sizes, one GPU) are rows of
// tests/fidelity/figures/*.csv, asserted with the per-class scoreboard by test_figures.cc; what
// is here checks why a row comes out as it does. Sources: docs/fidelity-sources.md.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kMiB = std::size_t{1} << 20;
}  // namespace

// The EFA class is what brings the p6-b200 latency row in: the same graph on InfiniBand
// (b200-cluster-2, NCCL's 2.7-14 us network hops) is half the measured time.
TEST_CASE("EFA's per-message cost is what the p6-b200 latency row needs") {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = 2;
  r.gpus_per_thread = 1;
  const double ib = predict(topo::load_topology("b200-cluster-2"), r).time_us;
  CHECK(ib / 50.58 - 1.0 < -0.25);  // outside the band without EFA's hop
}

// NVIDIA/nccl issue 527's three p4d rows (1 GiB, NCCL >= 2.13 by its log, titled 2.9.9; 2 / 3 / 4
// nodes: 35215 / 64782 / 70253 us) are one fabric only if the 2-node run is a tree: NCCL prices a
// 2-node tree at its graph's raised intra speed (search.cc pass 2, up to 2 x the NIC's), and a
// 2-node tree moves S per node each way where a ring moves 2(n-1)/n S. So one NIC rate, fitted on
// the 2-node row alone, predicts the 3- and 4-node rows (held out). With the ring at 2 nodes (the
// model before this change) the fit lands at the line rate (+19.7% at 2 nodes) and 3 / 4 nodes are
// -33% / -38%.
TEST_CASE("p4d: a NIC rate fitted on 2 nodes predicts 3 and 4 nodes (the 2-node tree)") {
  const auto predict_us = [](int nodes, double nic_gbps, std::string* algo = nullptr) {
    topo::TopologyEdits e;
    e.settings.push_back(topo::parse_setting("nic_gbps=" + std::to_string(nic_gbps)));
    const topo::EditedTopology t =
        topo::apply_edits(topo::load_topology("aws-p4d-" + std::to_string(nodes)), e);
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.count = 1024 * kMiB / 4;
    r.gpus_per_thread = 1;
    const Prediction p = predict(t.topology, r);
    if (algo) *algo = p.algorithm;
    return p.time_us;
  };
  // Fit: the NIC rate (GB/s, at most the 12.5 line rate) whose 2-node prediction is nearest.
  double best_nic = 12.5, best_error = 1e9;
  for (double nic = 5.0; nic <= 12.5 + 1e-9; nic += 0.25) {
    const double error = std::abs(predict_us(2, nic) / 35215.0 - 1.0);
    if (error < best_error) best_error = error, best_nic = nic;
  }
  std::string algo;
  predict_us(2, best_nic, &algo);
  const double three = predict_us(3, best_nic) / 64782.0 - 1.0;
  const double four = predict_us(4, best_nic) / 70253.0 - 1.0;
  INFO("fitted nic_gbps " << best_nic << " (2 nodes " << algo << ", error " << best_error * 100
                          << "%): 3 nodes " << three * 100 << "%, 4 nodes " << four * 100 << "%");
  CHECK(algo == "tree");
  CHECK(best_error <= 0.10);
  CHECK(std::abs(three) <= 0.20);
  CHECK(std::abs(four) <= 0.20);
}

// A one-rank call in place is nothing on the device (NCCL's one-rank path: a copy out of place,
// nothing in place; NCCL 1's RingAllReduce had the same rule, 2.x's ncclLaunchOneRank keeps it),
// so nccl-tests times the host's call alone, whatever the GPU and the data type. The measured row
// (NVIDIA/nccl issue 120, 10 MB in place, 4-7 us, GPU not named) is in figures/one-gpu.csv; here:
// what runs, and that the preset (the GPU) does not move it. Before (the copy's time in place
// too): 15.9 us on dgx-a100, +218%; now 5.0 us, 0%.
TEST_CASE("one rank in place: the host's call alone (NVIDIA/nccl issue 120)") {
  double first_us = 0;
  for (const char* preset : {"dgx-a100", "dgx-h200"}) {
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.nranks = 1;
    r.spec.count = 10000000;
    r.dtype = DataType::int8;
    r.gpus_per_thread = 1;
    r.in_place = true;
    const Prediction p = predict(topo::load_topology(preset), r);
    INFO(preset << ": " << label(p) << " " << p.time_us << " us");
    CHECK(label(p) == "one_rank/none");
    if (first_us == 0) first_us = p.time_us;
    CHECK(p.time_us == Approx(first_us));
  }
}
