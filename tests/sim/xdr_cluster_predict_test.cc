// DGX B300 on InfiniBand XDR (topologies/presets/dgx_b300.cc): the same NVLink 5 node as DGX B200
// with 800G NICs, so what crosses the network runs at twice b200-cluster-N's rate (NCCL's SM100
// inter speed reaches 96 GB/s a channel, sim/src/nccl_tuning_table.h), and what stays on NVLink
// does not move. No published DGX B300 figure holds these to a measurement (docs/topologies.md).
#include <catch2/catch.hpp>
#include <string>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kGiB = std::size_t{1} << 30;

Prediction run(const topo::Topology& t, OpKind kind, std::size_t bytes) {
  Request r;
  r.spec.kind = kind;
  r.spec.count = bytes / 4 / (kind == OpKind::all_gather ? t.gpu_count() : 1);  // per rank
  return predict(t, r);
}
}  // namespace

TEST_CASE("b300-cluster-N: a NIC-bound ring at 800G takes half b200-cluster-N's time") {
  for (int nodes : {2, 8}) {
    INFO(nodes << " nodes");
    const Prediction b300 = run(topo::b300_cluster(nodes), OpKind::all_gather, 8 * kGiB);
    const Prediction b200 = run(topo::b200_cluster(nodes), OpKind::all_gather, 8 * kGiB);
    CHECK(b300.algorithm == "ring");
    CHECK(b300.time_us / b200.time_us == Approx(0.5).epsilon(0.05));
  }
}

TEST_CASE("dgx-b300: one node never touches its NICs, so it predicts as dgx-b200") {
  for (std::size_t bytes : {std::size_t{1} << 20, kGiB}) {
    INFO(bytes);
    const Prediction b300 = run(topo::dgx_b300(), OpKind::all_reduce, bytes);
    const Prediction b200 = run(topo::dgx_b200(), OpKind::all_reduce, bytes);
    CHECK(b300.algorithm == b200.algorithm);
    CHECK(b300.time_us == Approx(b200.time_us));
  }
  CHECK(run(topo::dgx_b300(), OpKind::all_reduce, kGiB).algorithm == "nvls");
}
