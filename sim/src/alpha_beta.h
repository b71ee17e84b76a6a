// Internal: the alpha-beta model's parts (analytic_alpha_beta.cc) that alpha_beta_path.cc shares.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "model.h"
#include "route_latency.h"
#include "what_if_latency.h"

namespace twinccl::sim::detail {

// A route's price: what a transfer over it costs.
struct RouteCost {
  std::vector<std::pair<std::int64_t, double>> directions;  // (link*2 + dir, bytes/s)
  double latency_us = 0.0;
  LinkClass link_class = LinkClass::nvlink;  // network if any network link, else PCIe if any
};

// The route a -> b (topology GPUs): its link directions at line rate, its latency (PXN's relay, as
// flow's) and its class.
RouteCost route_cost(const topo::Topology& t, int a, int b, RouteLatency latency);

// An uneven call priced along its ranks' steps (alpha_beta_path.cc); nullopt when some rank's step
// talks to more than one peer each way or the ranks' sends and receives do not pair up.
std::optional<double> uneven_path_us(const topo::Topology& topology, const Resolved& r,
                                     const AlgorithmParams& params, double element_bytes,
                                     const WhatIfLatency& hops, RouteLatency route_latency);

}  // namespace twinccl::sim::detail
