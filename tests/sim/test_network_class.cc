// A network's class changes what one network hop costs (sim/src/network_class.h): EFA's hop is
// AWS's own tuner figure (aws-ofi-nccl: 20 us, + 3 us completion overhead on Simple), InfiniBand
// and RoCE keep NCCL's. The same graph (aws-p5-2 is h100-cluster-2 with EFA, on AMD EPYC hosts)
// isolates it.
#include <catch2/catch.hpp>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
Prediction all_reduce(const char* topology, std::size_t bytes, const char* algo, Protocol p) {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = bytes / 4;
  r.algorithm = algo;
  r.protocol = p;
  return predict(topo::load_topology(topology), r);
}
}  // namespace

TEST_CASE("network class: an EFA hop costs AWS's 20 us, InfiniBand's NCCL's") {
  // Ring LL across 2 nodes: 2 network steps; NCCL's IB hop for ring/LL is 2.7 us. The 28 other
  // steps each post to the network: 2 us on p5's EPYC hosts, 1 us on DGX H100's Xeons (NCCL's
  // getNetOverhead), above the 0.6 us NVLink hop.
  const double ib = all_reduce("h100-cluster-2", 8 * 1024, "ring", Protocol::ll).time_us;
  const double efa = all_reduce("aws-p5-2", 8 * 1024, "ring", Protocol::ll).time_us;
  // (The 8 KiB also move at LL's multi-node cap, the host's: 22.5 GB/s on p5, 39 on DGX H100;
  // 0.04 us here.)
  CHECK(efa - ib == Approx(2 * (20.0 - 2.7) + 28 * (2.0 - 1.0)).margin(0.1));
  // Tree Simple: 2 log2(2) = 2 network hops, 14 us each on IB, 23 on EFA.
  const double ib_tree = all_reduce("h100-cluster-2", 8 * 1024, "tree", Protocol::simple).time_us;
  const double efa_tree = all_reduce("aws-p5-2", 8 * 1024, "tree", Protocol::simple).time_us;
  CHECK(efa_tree - ib_tree == Approx(2 * (23.0 - 14.0)).epsilon(1e-6));
  // RoCE runs NCCL's IB transport: the same latency as InfiniBand on the same graph.
  CHECK(all_reduce("mi300x-roce-2", 8 * 1024, "ring", Protocol::ll).time_us ==
        Approx(all_reduce("mi300x-cluster-2", 8 * 1024, "ring", Protocol::ll).time_us));
  // Inside one node there is no network hop: the class changes nothing.
  CHECK(all_reduce("aws-p5-1", 8 * 1024, "ring", Protocol::ll).time_us ==
        Approx(all_reduce("h100-cluster-1", 8 * 1024, "ring", Protocol::ll).time_us));
}

// 128 GPUs over 2 NVL72 racks: the first 128 of gb200-nvl72-cluster-2 are 72 + 56 (unequal, so
// no NVLS-tree); placed 2 x 64 (gb200-nvl72-cluster-2x64) NCCL's NVLS-tree applies.
TEST_CASE("partial racks: a 128-GPU job as 2 x 64 runs NVLS-tree, 72 + 56 cannot") {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = (std::size_t{1} << 30) / 4;
  r.spec.nranks = 128;
  CHECK(predict(topo::load_topology("gb200-nvl72-cluster-2x64"), r).algorithm == "nvls_tree");
  CHECK(predict(topo::load_topology("gb200-nvl72-cluster-2"), r).algorithm != "nvls_tree");
}
