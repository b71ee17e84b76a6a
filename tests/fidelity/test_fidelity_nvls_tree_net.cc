// NVLS-tree's network part across many nodes (sim/src/nvls_tree_net_fill.cc, analytic_nccl.cc
// nccl_nvls_chunk_bytes): aws-ofi-nccl sets NCCL_NVLS_CHUNKSIZE = NCCL_NVLSTREE_MAX_CHUNKSIZE =
// 512 KiB on p5 (v1.16.3 src/platform-aws.cpp:159-160), where NCCL alone takes 64 KiB from 4
// nodes; and on EFA each level of the tree of nodes holds one step of every NVLS channel and head
// on its hop up and its hop down (a Simple step is sent only once written, and EFA queues what is
// in flight; on InfiniBand the term would break asserted figures, so it is not there). Checked on
// the held-out p5 rows it moves (tests/fidelity/figures/aws-efa.csv, crazyguitar/aws-gpu-
// communication-benchmark; docs/fidelity.md "NVLS-tree's network part").
#include <catch2/catch.hpp>

#include "../../sim/src/network_class.h"
#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

struct Parts {
  double fixed_us;    // what the call pays beyond bytes / algbw: NCCL's latency and the fills
  double algbw_gbps;  // of the bandwidth term alone
};

Parts nvls_tree_parts(const topo::Topology& t, std::size_t bytes) {
  Request r = fidelity::all_reduce_request(bytes, Protocol::simple, "nvls_tree");
  const double with_latency = predict(t, r).time_us;
  r.software_latency = false;
  const double bare_us = predict(t, r).time_us;
  return {with_latency - bare_us, static_cast<double>(bytes) / (bare_us * 1e3)};
}

double exposed(double steps) { return steps / (steps + 1.0); }

}  // namespace

// 32 p5 nodes, 4 GiB: 16 NVLS channels x 8 heads of 512 KiB (4 GiB >= 32 x 128 x 512 KiB keeps
// it) = 64 MiB a step, K = 64 steps a channel. NCCL's latency: NVLS hop 25 us + 2 x 5 EFA Simple
// hops of 23 us. The NVLS fill: 2 steps at the call's algbw; the network: 2 x 5 hops of one step at
// the node's NICs (the preset's 8 x 4 x 100G, each GPU's 50 GB/s held to its PCIe gen5 48: 384
// GB/s). The old model took 64 KiB chunks (8 MiB steps) and no network hops: 8x less NVLS fill and
// none of the 1.7 ms on the network. Once per call the first chunk up the tree waits for its
// receiver's control message: the efa class's slot round trip (83.5 us) less the 23 us hop charged
// (net_window.cc nvls_tree_first_message_wait_us).
TEST_CASE("NVLS-tree on p5: aws-ofi-nccl's 512 KiB chunk, one step per further level of nodes") {
  const double step_bytes = 16.0 * 8.0 * 512.0 * 1024.0;
  const double steps = 4096.0 * 1024.0 * 1024.0 / step_bytes;
  const double first_message_us =
      sim::detail::network_terms(topo::NetworkClass::efa).rdma_slot_round_trip_us - 23.0;
  const auto expected_us = [&](int log2_nodes, double algbw_gbps) {
    const double latency_us = 25.0 + 2.0 * log2_nodes * 23.0;
    const double nvls_fill_us = 2.0 * exposed(steps) * step_bytes / (algbw_gbps * 1e3);
    const double net_fill_us = 2.0 * log2_nodes * exposed(steps) * step_bytes / (8 * 48.0 * 1e3);
    return latency_us + nvls_fill_us + net_fill_us + first_message_us;
  };
  const Parts p32 = nvls_tree_parts(topo::load_topology("aws-p5-32"), std::size_t{4096} << 20);
  CHECK(p32.fixed_us == Approx(expected_us(5, p32.algbw_gbps)).epsilon(1e-3));
  // Half the nodes, one level less: 2 hops and their steps fewer. On 2 nodes each node sends one
  // tree's half of the channels per hop: half a step on each of the 2 hops.
  const Parts p16 = nvls_tree_parts(topo::load_topology("aws-p5-16"), std::size_t{4096} << 20);
  CHECK(p16.fixed_us == Approx(expected_us(4, p16.algbw_gbps)).epsilon(1e-3));
  const Parts p2 = nvls_tree_parts(topo::load_topology("aws-p5-2"), std::size_t{4096} << 20);
  CHECK(p2.fixed_us - (25.0 + 2.0 * 23.0) - first_message_us -
            2.0 * exposed(steps) * step_bytes / (p2.algbw_gbps * 1e3) ==
        Approx(2.0 * 0.5 * exposed(steps) * step_bytes / (8 * 48.0 * 1e3)).epsilon(1e-3));
}

// On InfiniBand NCCL's own chunk holds (64 KiB from 4 nodes, 128 KiB below) and no network fill is
// added: 8 H100 nodes pay NCCL's latency and the NVLS fill alone, as before.
TEST_CASE("NVLS-tree on InfiniBand: NCCL's chunk, the NVLS fill alone") {
  const auto nvls_only_us = [](const Parts& p, int log2_nodes, double chunk_bytes) {
    const double step_bytes = 16.0 * 8.0 * chunk_bytes;
    const double steps = 4096.0 * 1024.0 * 1024.0 / step_bytes;
    return 25.0 + 2.0 * log2_nodes * 20.9 +  // NCCL's NVLS hop and NVLS-tree network hops
           2.0 * exposed(steps) * step_bytes / (p.algbw_gbps * 1e3);
  };
  const Parts eight = nvls_tree_parts(topo::h100_cluster(8), std::size_t{4096} << 20);
  CHECK(eight.fixed_us == Approx(nvls_only_us(eight, 3, 64.0 * 1024.0)).epsilon(1e-3));
  const Parts two = nvls_tree_parts(topo::h100_cluster(2), std::size_t{4096} << 20);
  CHECK(two.fixed_us == Approx(nvls_only_us(two, 1, 128.0 * 1024.0)).epsilon(1e-3));
}
