// A trace's send/recv pair is priced where nccl-tests' sendrecv rounds are
// (sim/src/p2p_send_price.h SendPricing, the one owner), so a replayed pipeline-parallel send
// takes what `predict_p2p` says for the same one-send round: NCCL's ring/Simple hop by route class
// as the call takes it (the network class's hop, the host's post), on the network the net
// plugin's completions and the first message's wait for the receiver's control message (EFA), and
// the NICs' delivered share. The replay charged NCCL's table hop (14 us Simple on any network)
// and nothing else: a 4 MiB send across two p5 nodes replayed in 109.8 us where predict_p2p gives
// 198.6 (flow; `twinccl replay` of that one send, before and after).
#include <catch2/catch.hpp>
#include <string>

#include "replay_traces.h"
#include "twinccl/sim/p2p.h"
#include "twinccl/sim/replay.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;
using namespace twinccl::sim::testing;

namespace {

// One send of `count` float32 from rank `src` to `dst` of the world communicator, replayed.
double replayed_send_us(const topo::Topology& t, int src, int dst, std::size_t count,
                        bool software_latency = true) {
  const int n = t.gpu_count();
  TraceBuilder b(n);
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) all[static_cast<std::size_t>(r)] = r;
  const int world = b.comm("world", all);
  b.wait(src, b.issue(src, world, OpKind::send, count, dst));
  b.wait(dst, b.issue(dst, world, OpKind::recv, count, src));
  ReplayOptions options;
  options.software_latency = software_latency;
  const ReplayResult res = replay(b.trace(), t, options);
  REQUIRE(res.ops.size() == 1);
  return res.ops[0].time_us();
}

}  // namespace

TEST_CASE("replay: a send/recv pair takes what predict_p2p says for the same one-send round") {
  const std::string preset =
      GENERATE(as<std::string>{}, "aws-p5-2", "mi300x-roce-2", "h100-cluster-2", "dgx-h100");
  const topo::Topology t = topo::load_topology(preset);
  const int n = t.gpu_count();
  const int src = n / 2 - 1, dst = n / 2;  // across the nodes where there are two
  const std::size_t count = GENERATE(std::size_t{256}, std::size_t{1} << 20);  // 1 KiB, 4 MiB
  const Tuner tuner(t, n);
  const P2pPattern round = {P2pRound{{P2pSend{src, dst, 4.0 * static_cast<double>(count)}}}};
  const double p2p_us = predict_p2p(tuner, round, Fidelity::flow).time_us;
  const double replay_us = replayed_send_us(t, src, dst, count);
  INFO(preset << " " << 4 * count << " B, rank " << src << " -> " << dst << ": replay " << replay_us
              << " us, predict_p2p (flow) " << p2p_us);
  CHECK(replay_us == Approx(p2p_us).epsilon(1e-6).margin(1e-3));
}

// Route latencies as a collective's (transfer_pricing.h platform_links): with NCCL's hops charged,
// only the links beyond one hop (a spine tier: rank 0 -> node 40 crosses from one 32-node unit of
// h100-cluster-64 into the other); without them, every link's. predict_p2p charged none in either
// case while the replay charged them.
TEST_CASE("replay: a send across a spine or without NCCL's hops takes what predict_p2p says") {
  const topo::Topology t = topo::load_topology("h100-cluster-64");
  const bool software = GENERATE(true, false);
  const int dst = GENERATE(8, 8 * 40);  // node 1 (one leaf), node 40 (over a spine)
  const std::size_t count = GENERATE(std::size_t{256}, std::size_t{1} << 20);
  const Tuner tuner(t, t.gpu_count(), 0, software);
  const P2pPattern round = {P2pRound{{P2pSend{0, dst, 4.0 * static_cast<double>(count)}}}};
  for (Fidelity f : {Fidelity::analytic, Fidelity::flow}) {
    const double p2p_us = predict_p2p(tuner, round, f).time_us;
    const double replay_us = replayed_send_us(t, 0, dst, count, software);
    INFO("software latency " << software << ", rank 0 -> " << dst << ", " << 4 * count
                             << " B: replay " << replay_us << " us, predict_p2p (" << name(f)
                             << ") " << p2p_us);
    CHECK(replay_us == Approx(p2p_us).epsilon(1e-6).margin(1e-3));
  }
}
