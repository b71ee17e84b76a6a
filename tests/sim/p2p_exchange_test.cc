// Grouped send/recv rounds priced on a tuner's communicator (sim/p2p.h): nccl-tests' sendrecv and
// hypercube patterns, link sharing within a round, rounds one after the other, flow vs analytic.
#include <catch2/catch.hpp>

#include "twinccl/errors.h"
#include "twinccl/sim/p2p.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;

TEST_CASE("p2p patterns: sendrecv is one ring round, hypercube log2(n) doubling rounds",
          "[sim][p2p]") {
  const sim::P2pPattern ring = sim::sendrecv_pattern(4, 100);
  REQUIRE(ring.size() == 1);
  REQUIRE(ring[0].sends.size() == 4);
  CHECK(ring[0].sends[3].src == 3);
  CHECK(ring[0].sends[3].dst == 0);
  const sim::P2pPattern cube = sim::hypercube_pattern(8, 10);
  REQUIRE(cube.size() == 3);
  for (std::size_t k = 0; k < cube.size(); ++k) {
    for (const sim::P2pSend& s : cube[k].sends) {
      CHECK(s.dst == (s.src ^ (1 << k)));
      CHECK(s.bytes == Approx(10.0 * (1 << k)));
    }
  }
  CHECK(sim::hypercube_pattern(1, 10).empty());
  CHECK_THROWS_AS(sim::hypercube_pattern(6, 10), InvalidArgument);
}

TEST_CASE("p2p pricing: a round's sends share links, rounds add up, flow agrees", "[sim][p2p]") {
  const topo::Topology t = topo::pcie_4gpu();  // 4 GPUs, each on its own PCIe gen4 x16 link
  const double link_gbps = topo::pcie_bandwidth_gbps(4, 16);
  const sim::Tuner bare(t, 4, 0, /*software_latency*/ false);
  const double bytes = 64e6;
  // Without NCCL's software latency a send is its route's hardware, as a collective's: every
  // link's latency (GPU -> PCIe switch -> GPU, the same for every pair here) and its bytes.
  double route_us = 0.0;
  for (const topo::LinkId id : t.route(0, 1)) route_us += t.link(id).latency_us;
  REQUIRE(route_us > 0.0);
  const double block_us = bytes / (link_gbps * 1e9) * 1e6;
  // Ring: every GPU link carries one send up and one receive down (full duplex): no sharing.
  const double ring_us =
      sim::predict_p2p(bare, sim::sendrecv_pattern(4, bytes), sim::Fidelity::analytic).time_us;
  CHECK(ring_us == Approx(block_us + route_us));
  // Three GPUs sending to GPU 0 at once share its link down: three times the bytes' time.
  sim::P2pRound fan_in;
  for (int r = 1; r < 4; ++r) fan_in.sends.push_back({r, 0, bytes});
  const double fan_us = sim::predict_p2p(bare, {fan_in}, sim::Fidelity::analytic).time_us;
  CHECK(fan_us == Approx(3 * block_us + route_us));
  // Hypercube on 4 ranks: rounds of 1 and 2 blocks, one after the other.
  const double cube_us =
      sim::predict_p2p(bare, sim::hypercube_pattern(4, bytes), sim::Fidelity::analytic).time_us;
  CHECK(cube_us == Approx(3 * block_us + 2 * route_us));
  // NCCL's software latency adds a base per round and a hop per send.
  const sim::Tuner tuned(t, 4);
  CHECK(sim::predict_p2p(tuned, sim::hypercube_pattern(4, bytes), sim::Fidelity::analytic).time_us >
        cube_us);
  // The flow model plays the same rounds on SimGrid: the same where flows share links equally.
  for (const sim::P2pPattern& p : {sim::sendrecv_pattern(4, bytes), sim::P2pPattern{fan_in}}) {
    const double analytic = sim::predict_p2p(tuned, p, sim::Fidelity::analytic).time_us;
    const sim::P2pPrediction flow = sim::predict_p2p(tuned, p, sim::Fidelity::flow);
    CHECK(flow.model == "flow");
    CHECK(flow.time_us == Approx(analytic).epsilon(0.02));
  }
  // One rank sends to itself: a copy inside the GPU, not free (nccl-tests -g 1 sendrecv_perf).
  const topo::Topology dgx = topo::dgx_h100();
  const sim::Tuner one(dgx, 1);
  const double copy_us =
      sim::predict_p2p(one, sim::sendrecv_pattern(1, 1e9), sim::Fidelity::analytic).time_us;
  // Through device memory: a read and a write at 0.9 x the H100's 3350 GB/s.
  CHECK(copy_us == Approx(1e9 / (3350e9 * 0.9 / 2.0) * 1e6).epsilon(1e-9));
  CHECK(sim::predict_p2p(one, sim::sendrecv_pattern(1, 1e9), sim::Fidelity::flow).time_us ==
        Approx(copy_us));
  CHECK_THROWS_AS(sim::predict_p2p(tuned, {sim::P2pRound{{{0, 4, 1.0}}}}, sim::Fidelity::analytic),
                  InvalidArgument);
}

TEST_CASE("p2p launches: one group per hypercube round with -g 1, one outer group with -g N",
          "[sim][p2p]") {
  // nccl-tests wraps the N GPUs of one thread in an outer ncclGroupStart/End (-g N > 1), so
  // hypercube's per-round groups nest into one launch; with one GPU per thread each round launches.
  const topo::Topology dgx = topo::dgx_h100();
  const sim::Tuner tuner(dgx, 8);
  const sim::P2pPattern cube = sim::hypercube_pattern(8, 4096);  // small: launch-bound
  const double kernels = sim::predict_p2p(tuner, cube, sim::Fidelity::analytic, 0).time_us;
  const double per_round = sim::predict_p2p(tuner, cube, sim::Fidelity::analytic, 1).time_us;
  const double outer_group = sim::predict_p2p(tuner, cube, sim::Fidelity::analytic, 8).time_us;
  CHECK(per_round == Approx(kernels + 3 * 5.0));  // 3 rounds, 5 us launch each
  CHECK(outer_group ==
        Approx(std::max(kernels + 5.0, 40.0)));  // one launch of 8 GPUs by one thread
  CHECK(
      sim::predict_p2p(tuner, cube, sim::Fidelity::flow, 8).time_us ==
      Approx(std::max(sim::predict_p2p(tuner, cube, sim::Fidelity::flow, 0).time_us + 5.0, 40.0)));
}

TEST_CASE("p2p in one node: a send runs on NCCL's channels for its size, each at a channel's speed",
          "[sim][p2p]") {
  // 8 A100s (p2p_channels.h): NCCL's 24 channels -> 32 p2p, 32 a peer, 4 to start; parts of 64 KiB
  // - 16 MiB. A 128 MiB send runs on 8 channels at the search's 20 GB/s each (160 GB/s, under the
  // NVLink's 240); 256 MiB on 16 (320: the NVLink binds); 64 KiB parts: 128 KiB on 2 channels from
  // 2.22.3, on the 4 it starts from before.
  const topo::Topology a100 = topo::load_topology("dgx-a100");
  const sim::Tuner bare(a100, 8, 0, /*software_latency*/ false);
  const auto ring_us = [](const sim::Tuner& tuner, double bytes, sim::Fidelity f) {
    return sim::predict_p2p(tuner, sim::sendrecv_pattern(8, bytes), f).time_us;
  };
  double route_us = 0.0;
  for (const topo::LinkId id : a100.route(0, 1)) route_us += a100.link(id).latency_us;
  const double nvlink_gbps = a100.summary().nvlink_bandwidth_gbps;
  const double mib = 1 << 20;
  CHECK(ring_us(bare, 128 * mib, sim::Fidelity::analytic) ==
        Approx(128 * mib / 160e9 * 1e6 + route_us));
  CHECK(ring_us(bare, 256 * mib, sim::Fidelity::analytic) ==
        Approx(256 * mib / (nvlink_gbps * 1e9) * 1e6 + route_us));
  CHECK(ring_us(bare, 128 * 1024, sim::Fidelity::analytic) ==
        Approx(128 * 1024 / 40e9 * 1e6 + route_us));
  const sim::Tuner older(a100, 8, 0, /*software_latency*/ false, /*nccl_version*/ 22105);
  CHECK(ring_us(older, 128 * 1024, sim::Fidelity::analytic) ==
        Approx(128 * 1024 / 80e9 * 1e6 + route_us));
  // The flow plays each send's bytes stretched to the cap: the same times.
  const sim::Tuner tuned(a100, 8);
  for (const double bytes : {4 * mib, 128 * mib, 1024 * mib}) {
    INFO(bytes / mib << " MiB");
    CHECK(ring_us(tuned, bytes, sim::Fidelity::flow) ==
          Approx(ring_us(tuned, bytes, sim::Fidelity::analytic)).epsilon(0.02));
  }
  // A network send keeps its route's rate (test_p2p_channels_across_nodes.cc: the sends that stay
  // in a node of a communicator across nodes): an H100 pair on two nodes moves at the NIC's.
  const topo::Topology two = topo::load_topology("h100-cluster-2");
  const sim::Tuner pair(two, std::vector<int>{0, 8}, 0, /*software_latency*/ false);
  const double net_us =
      sim::predict_p2p(pair, {sim::P2pRound{{{0, 1, 64 * mib}}}}, sim::Fidelity::analytic).time_us;
  CHECK(net_us < 64 * mib / 48e9 * 1e6 * 1.1);  // about the NIC's 48 GB/s, no channel cap
}
