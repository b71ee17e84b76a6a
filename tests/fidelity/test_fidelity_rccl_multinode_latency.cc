// Across nodes RCCL charges its own LL latency terms on AMD Instinct nodes: base 12 us, an xGMI
// hop of 0.9 (tree) / 0.8 (ring) us and a network hop of 10.5 (tree) / 9.5 (ring) us (ROCm/rccl
// 0cbce2a src/graph/tuning.cc:57-60 baseLat, tuning_model_5 :225-232; tuning_model_0 :77 / :81
// agrees within 1.2 us on 2 nodes), where NCCL's rows (6.6 us base) gave 2 x 8 GPUs tree/LL 25
// us. The model before this priced NCCL's rows (sim/src/analytic_rccl.cc; docs/fidelity.md
// "RCCL on AMD, multi-node latency").
#include <catch2/catch.hpp>

#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

// The software latency a forced call pays: the prediction with it less the one without.
double latency_us(const topo::Topology& t, std::size_t bytes, Protocol protocol,
                  const char* algorithm) {
  return fidelity::fixed_latency_us(t, fidelity::all_reduce_request(bytes, protocol, algorithm));
}

}  // namespace

TEST_CASE("RCCL across nodes: tree/LL and ring/LL pay RCCL's base and hop latencies") {
  for (const char* name : {"mi355x-roce-2", "mi300x-roce-2"}) {
    INFO(name);
    const topo::Topology two = topo::load_topology(name);
    // 12 + 2 x (7 xGMI hops x 0.9 + 1 network hop x 10.5)
    CHECK(latency_us(two, 8, Protocol::ll, "tree") == Approx(45.6).epsilon(0.01));
    // 12 + 28 steps x max(0.8, the 2 us network post of an EPYC host) + 2 network steps x 9.5
    CHECK(latency_us(two, 8, Protocol::ll, "ring") == Approx(87.0).epsilon(0.01));
  }
  // 4 nodes: log2(4) = 2 network hops up and down the tree.
  const topo::Topology four = topo::load_topology("mi355x-roce-4");
  CHECK(latency_us(four, 8, Protocol::ll, "tree") ==
        Approx(12.0 + 2.0 * (6.3 + 21.0)).epsilon(0.01));
}

TEST_CASE("RCCL across nodes: one MI300X node keeps RCCL's one-node terms") {
  // 12 + 14 xGMI ring hops x 0.8, the launch inside RCCL's base (unchanged by the multi-node terms)
  const topo::Topology one = topo::load_topology("mi300x-8");
  const Request r = fidelity::all_reduce_request(8, Protocol::ll, "ring");
  CHECK(predict(one, r).time_us == Approx(23.2).epsilon(0.01));
}
