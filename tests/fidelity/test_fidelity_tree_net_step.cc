// A tree/LL128 (or LL) all_reduce across nodes waits one whole step on each network hop of its
// pipeline's fill (sim/src/tree_pipeline_fill.cc): NCCL's sending proxy posts a step to the network
// only once the GPU has written all of it (NVIDIA/nccl v2.28.7-1 src/transport/net.cc:1272-1313),
// while inside a node LL128 forwards line by line. Checked on the held-out p5 rows it moves
// (tests/fidelity/figures/aws-efa.csv, crazyguitar/aws-gpu-communication-benchmark; docs/
// fidelity.md "Trees at many nodes").
#include <catch2/catch.hpp>

#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

// What the call pays beyond its bandwidth term: NCCL's latency plus the fills.
double fixed_us(const topo::Topology& t, std::size_t bytes) {
  return fidelity::fixed_latency_us(t,
                                    fidelity::all_reduce_request(bytes, Protocol::ll128, "tree"));
}

}  // namespace

// 16 p5 nodes, 256 MiB: 8 channels (one per 400G rail); enqueue.cc keeps the whole LL128 step
// (576000 data bytes: 256 MiB / (8 x 576000) = 58 chunks a channel, >= (1 + 4 + 0.8) x 64 / 8).
// The GPU writes that step at the rate the call runs: the tree/LL128 kernel's broadcast warps
// (192 of 640 threads, 0.3 x NCCL's 36.7 GB/s Hopper ring/LL128 channel, x 2 in busBw = 22.02
// GB/s a channel, below NCCL's 29: tree_ll128_split_algbw_gbps). Up and down the tree of 16
// nodes: 2 x 4 network hops of 576000 / 22.02 GB/s = 209.3 us beyond NCCL's latency (the same
// call at 8 bytes, whose step is 1 byte a channel). The first model charged the hop latency only
// (0 here), the next one the step at NCCL's 29 GB/s (158.9 us).
TEST_CASE("tree/LL128 across nodes: each network hop of the fill waits one step") {
  const topo::Topology p5 = topo::load_topology("aws-p5-16");
  const double fill_us = fixed_us(p5, 256u << 20) - fixed_us(p5, 8);
  const double channel_bus_gbps = 2.0 * (192.0 / 640.0) * 36.7;
  CHECK(fill_us == Approx(2.0 * 4.0 * 576000.0 / (channel_bus_gbps * 1000.0)).epsilon(0.01));
  // Twice the nodes, one more level of the tree up and down: 2 x 5 hops (the chunk is the same:
  // 58 chunks a channel still >= (1 + 5 + 0.8) x 64 / 8).
  const topo::Topology p5_32 = topo::load_topology("aws-p5-32");
  CHECK(fixed_us(p5_32, 256u << 20) - fixed_us(p5_32, 8) ==
        Approx(fill_us * 10.0 / 8.0).epsilon(0.01));
}

// Inside one node LL128 forwards line by line: the chain of 8 GPUs adds no step time.
TEST_CASE("tree/LL128 in one node: no step waits along the chain") {
  const topo::Topology node = topo::load_topology("dgx-h100");
  CHECK(fixed_us(node, 256u << 20) == Approx(fixed_us(node, 8)).epsilon(1e-9));
}
