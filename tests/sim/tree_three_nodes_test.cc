// A tree all_reduce over 3 nodes (issue 24, racks round; docs/fidelity.md "NVL72 racks across a
// scale-out network"): NCCL's double binary tree (graph/trees.cc ncclGetDtree) over 3 nodes is two
// chains, 0 <- 2 <- 1 and 1 <- 0 <- 2, whose busiest node moves 1.5 S over its NICs (from 4 nodes
// 2 S, what tuning.cc's tree ratio of 0.5 prices). NCCL ranks with its price; the call moves at the
// chains' rate. NCCL before 2.28.3 capped a Blackwell tree channel at 72 GB/s from 3 nodes, not 24.
#include <catch2/catch.hpp>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kGiB = std::size_t{1} << 30;

// algbw (GB/s) of a 16 GiB all_reduce on `racks` x 4 GB200 (one 400G NIC each), NVLS off.
double tree_algbw(int racks, const std::string& algorithm, int nccl_version) {
  topo::TopologyEdits e;
  e.settings.push_back({"nvls", 0.0});
  const topo::Topology t = topo::apply_edits(topo::gb200_nvl72_partial(racks, 4), e).topology;
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = 16 * kGiB / 4;
  r.algorithm = algorithm;
  r.software_latency = false;
  r.nccl_version = nccl_version;
  return static_cast<double>(16 * kGiB) / (predict(t, r).time_us * 1e3);
}
}  // namespace

TEST_CASE("a tree over 3 nodes moves at its chains' rate: 4 NICs x 48 GB/s x 0.92 / 1.5") {
  // NCCL 2.27.3 (nccl#1801's): the channel cap (4 x 72 busBw) does not bind; measured 128 GB/s.
  CHECK(tree_algbw(3, "tree", 22703) == Approx(4 * 48.0 * 0.92 / 1.5).epsilon(0.01));
  // From 2.28.3 NCCL's cap, 24 GB/s a channel, bounds the busBw: 4 x 24 / 1.5.
  CHECK(tree_algbw(3, "tree", 0) == Approx(4 * 24.0 / 1.5).epsilon(0.01));
  // 4 nodes: every node of the double tree moves 2 S, NCCL's own price (busBw / 2).
  CHECK(tree_algbw(4, "tree", 22703) == Approx(4 * 48.0 * 0.92 / 2.0).epsilon(0.01));
}

TEST_CASE("NCCL still ranks ring first on 3 nodes (its price of the tree is busBw / 2)") {
  topo::TopologyEdits e;
  e.settings.push_back({"nvls", 0.0});
  const topo::Topology t = topo::apply_edits(topo::gb200_nvl72_partial(3, 4), e).topology;
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = 16 * kGiB / 4;
  for (int version : {22703, 0}) {
    r.nccl_version = version;
    INFO(version);
    CHECK(predict(t, r).algorithm == "ring");
  }
}
