// Internal: one send of NCCL's send/recv priced on a communicator, the one owner for nccl-tests'
// sendrecv and hypercube rounds (p2p_exchange.cc, both fidelities) and a trace's send/recv pairs
// (replay_build.cc).
//
//   const SendPricing pricing(tuner);                        // the communicator's, once
//   const WhatIfLatency l = pricing.round_latency(4 << 20);  // a round whose largest send is 4 MiB
//   double delay_s = pricing.delay_s(l, 4 << 20, LinkClass::network);  // a 4 MiB network send
//   // the round pays l.base_us once; a network link moves pricing.network_share() of its rate
//
// How it works. NCCL has no tuning model for send/recv [assumed: its ring/Simple figures]: a send
// waits the ring/Simple hop of its route's class as an algorithm NCCL has no model for does
// (what_if_latency.h: the network class's hop, the host's network post; priced as an all_reduce's,
// whose plateau factor applies from 64 bytes per channel and rank), and a round pays the ring's
// base latency once. Over the network the net plugin's proxy
// also spends host time on the send's messages' completions and, on an RDMA protocol that writes
// only into a buffer the receiver named, the first message waits for the receiver's control
// message, less the hop already charged (p2p_net_messages.h). A network link moves NCCL's speed
// for a NIC times the share a call across nodes gets (nic_delivered_share), and its route is
// charged the link latencies a collective's is (route_latency_rule: a spine tier beyond NCCL's hop;
// without software latency, every link's). A send that stays in a node moves at most NCCL's
// channels for its size times a channel's speed (p2p_channels.h: 8 A100s' 128 MiB send on 8
// channels, 160 GB/s under the NVLink's 240; across 2 nodes of H100 the network peers' 2 channels,
// 60 GB/s): the analytic round takes the lower rate, a flow plays the send's bytes stretched by
// route rate / that cap (exact for a send alone on its links, as nccl-tests' are).
#pragma once

#include <optional>

#include "model.h"
#include "p2p_channels.h"
#include "p2p_net_messages.h"
#include "route_latency.h"
#include "twinccl/sim/tuner.h"
#include "what_if_latency.h"

namespace twinccl::sim::detail {

class SendPricing {
 public:
  explicit SendPricing(const Tuner& tuner);  // the tuner outlives this
  // NCCL's ring/Simple latency for a round whose largest send is `round_bytes`; none without
  // software latency or on one rank.
  WhatIfLatency round_latency(double round_bytes) const;
  // What a send of `bytes` on a route of `route_class` (route_latency.h route_link_class) waits
  // before its bytes move in a round of `latency`, seconds.
  double delay_s(const WhatIfLatency& latency, double bytes, LinkClass route_class) const;
  // The share of a network link's line rate a send moves at.
  double network_share() const { return network_share_; }
  // The route latency a send is charged beyond its delay (route_latency.h, a collective's rule):
  // the links beyond NCCL's hop (a spine tier) with software latency on, else every link's.
  double route_latency_us(int src_gpu, int dst_gpu) const;
  // The most a send of `bytes` on a route of `route_class` moves at, GB/s: NCCL's channels for it
  // times a channel's speed, where it stays in a node of NVIDIA GPUs (p2p_channels.h: across
  // nodes the communicator's network peers set its channels too); nullopt where its route's rate
  // is its (a network route).
  std::optional<double> channels_gbps(double bytes, LinkClass route_class) const;
  // A flow's bytes for a send of `bytes` from `src_gpu` to `dst_gpu` under that cap: stretched by
  // the route's slowest link over the cap when the cap is lower, else `bytes`.
  double played_bytes(double bytes, int src_gpu, int dst_gpu) const;
  RouteLatency route_latency() const { return route_latency_rule(tuner_->software_latency()); }

 private:
  const Tuner* tuner_;
  double completion_host_us_ = 0.0;  // the network class's, with software latency on
  std::optional<P2pNetMessages> messages_;
  double network_share_ = 1.0;
  NcclP2pPlan plan_;           // the communicator's p2p channels (p2p_channels.h), once
  double channel_gbps_ = 0.0;  // one channel's speed inside a node, 0 = no cap
};

}  // namespace twinccl::sim::detail
