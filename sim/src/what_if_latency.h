// Internal: the software latency of an algorithm NCCL has no model for (a what-if ring, bruck,
// direct, halving_doubling, hierarchical...), the one owner flow (transfer_pricing.cc), alpha-beta
// (analytic_alpha_beta.cc, alpha_beta_path.cc) and the tuner's grouped p2p term ask.
//
//   const WhatIfLatency l = what_if_latency(view, Protocol::simple, OpKind::all_gather_v, bytes);
//   // the call pays l.base_us once; a transfer over a network route l.hop(LinkClass::network)
//
// How it works [assumed: NCCL's ring's]: the ring's parts for the call as nccl_latency_parts
// gives them (the host's network post, the network class's hop, RCCL's own terms, the Simple
// plateau), base once and one hop per transfer by its route's class; NVLink and PCIe routes both
// take the view's intra-node hop, as NCCL's one intra-node hardware figure per graph (tuning.cc
// intraHw). Alpha-beta had charged NCCL's table hop (14 us Simple on any network, a 1 us post)
// where flow charged these: mi300x-cluster-8's EPYC hosts, ring all_gather_v 64 MiB, analytic
// 2509.9 us against flow's 2652.9. `bytes`: the call's algbw bytes (perf_math.h algbw_bytes).
#pragma once

#include <array>
#include <cstddef>

#include "model.h"

namespace twinccl::sim::detail {

struct WhatIfLatency {
  double base_us = 0.0;
  std::array<double, 3> hop_us{};  // by LinkClass: NVLink, PCIe, network
  double hop(LinkClass c) const { return hop_us[static_cast<std::size_t>(c)]; }
};
WhatIfLatency what_if_latency(const TopologyView& view, Protocol protocol, OpKind kind,
                              double bytes);

}  // namespace twinccl::sim::detail
