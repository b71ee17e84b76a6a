// The software latency of an algorithm NCCL has no model for (what_if_latency.h says how).
#include "what_if_latency.h"

namespace twinccl::sim::detail {

WhatIfLatency what_if_latency(const TopologyView& v, Protocol p, OpKind kind, double bytes) {
  const LatencyParts l = nccl_latency_parts(v, NcclAlgo::ring, p, kind, bytes);
  return {l.base_us, {l.intra_hop_us, l.intra_hop_us, l.net_hop_us}};
}

}  // namespace twinccl::sim::detail
