// One send of NCCL's send/recv priced on a communicator (p2p_send_price.h says how).
#include "p2p_send_price.h"

#include <algorithm>
#include <vector>

#include "network_class.h"
#include "p2p_channels.h"
#include "twinccl/sim/p2p.h"

namespace twinccl::sim::detail {

SendPricing::SendPricing(const Tuner& tuner)
    : tuner_(&tuner),
      completion_host_us_(
          tuner.software_latency() ? network_terms(tuner.view().network).completion_host_us : 0.0),
      network_share_(network_efficiency(tuner.view()) * tuner.view().nic_delivered_share),
      plan_(nccl_p2p_plan(tuner.view())),
      channel_gbps_(nccl_p2p_channel_gbps(tuner.view())) {
  if (completion_host_us_ > 0.0) messages_.emplace(tuner.view());
}

WhatIfLatency SendPricing::round_latency(double round_bytes) const {
  if (!tuner_->software_latency() || tuner_->nranks() < 2) return {};
  return what_if_latency(tuner_->view(), Protocol::simple, OpKind::all_reduce, round_bytes);
}

double SendPricing::delay_s(const WhatIfLatency& latency, double bytes,
                            LinkClass route_class) const {
  const double hop_us = latency.hop(route_class);
  if (route_class != LinkClass::network) return hop_us * 1e-6;
  double us = hop_us;
  if (completion_host_us_ > 0.0 && bytes > 0.0) {
    // A send and a receive completion per network message, and its batch's first message's
    // wait less the hop just charged.
    us += 2.0 * messages_->of_send(bytes) * completion_host_us_ +
          net_batch_first_slot_us(tuner_->view(), *messages_, bytes, hop_us);
  }
  return us * 1e-6;
}

double SendPricing::route_latency_us(int src_gpu, int dst_gpu) const {
  const topo::Topology& t = tuner_->topology();
  return pair_route_latency_us(t, src_gpu, dst_gpu, t.route(src_gpu, dst_gpu), route_latency());
}

std::optional<double> SendPricing::channels_gbps(double bytes, LinkClass route_class) const {
  if (route_class == LinkClass::network || !(channel_gbps_ > 0.0) || !(bytes > 0.0)) {
    return std::nullopt;
  }
  return nccl_p2p_send_channels(plan_, bytes) * channel_gbps_;
}

double SendPricing::played_bytes(double bytes, int src_gpu, int dst_gpu) const {
  const topo::Topology& t = tuner_->topology();
  const std::vector<topo::LinkId> route = t.route(src_gpu, dst_gpu);
  const auto cap = channels_gbps(bytes, route_link_class(t, route));
  if (!cap) return bytes;
  double route_gbps = 0.0;
  for (const topo::LinkId id : route) {
    const double rate = t.link(id).bandwidth_gbps;
    route_gbps = route_gbps > 0.0 ? std::min(route_gbps, rate) : rate;
  }
  return route_gbps > *cap ? bytes * route_gbps / *cap : bytes;
}

}  // namespace twinccl::sim::detail

namespace twinccl::sim {

P2pChannelPlan p2p_channel_plan(const Tuner& tuner) {
  const detail::NcclP2pPlan plan = detail::nccl_p2p_plan(tuner.view());
  return {plan.p2p_channels, plan.per_peer, detail::nccl_p2p_channel_gbps(tuner.view())};
}

}  // namespace twinccl::sim
