// Internal: how much of a route's link latency a model charges, one rule for flow (route_table.cc)
// and the alpha-beta model (analytic_alpha_beta.cc).
//
//   const double us =
//       route_latency_us(topology, topology.route(a, b), RouteLatency::beyond_nccl_hop);
#pragma once

#include <span>

#include "nccl_tuning_table.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim::detail {

// all             - every link's latency (no software latency: the hardware alone);
// beyond_nccl_hop - the call is priced with NCCL's hop latencies (tuning.cc hwLat), which already
//                   hold one hop's hardware; only the links beyond such a hop are charged;
// none            - nothing (a caller that charges NCCL's hops and wants no route term at all).
enum class RouteLatency { all, beyond_nccl_hop, none };

// The rule every call of a simulation is charged by, collective or send/recv (platform_links,
// p2p_send_price.h, alpha-beta): beyond NCCL's hop with its software latency on, else the hardware
// alone.
constexpr RouteLatency route_latency_rule(bool software_latency) {
  return software_latency ? RouteLatency::beyond_nccl_hop : RouteLatency::all;
}

// The class of the route `links` by which every model charges a transfer's hop (NCCL's hop is
// by the path's kind, tuning.cc hwLat: network across nodes, else intra): network if any link is
// a network link, else PCIe if any is, else NVLink (NVLink, NVSwitch and xGMI links). The one rule
// of flow's routes (route_table.cc), a send's price (p2p_exchange.cc, replay_build.cc) and
// alpha-beta's (alpha_beta_path.cc).
LinkClass route_link_class(const topo::Topology& topology, std::span<const topo::LinkId> links);

// The latency (microseconds) a model charges for the route `links` (a topology route).
double route_latency_us(const topo::Topology& topology, std::span<const topo::LinkId> links,
                        RouteLatency which);

// The latency charged from GPU rank src to GPU rank dst over `links` (topology.route(src, dst)),
// the one rule of flow's routes (route_table.cc) and alpha-beta's: the route's, except that with
// NCCL's hops charged a transfer to another node's GPU on another rail is charged PXN's rail-local
// relay (src's node GPU on dst's rail over NVLink, then the rail) where that is less: NCCL keeps a
// channel on one rail with PXN.
double pair_route_latency_us(const topo::Topology& topology, int src, int dst,
                             std::span<const topo::LinkId> links, RouteLatency which);

}  // namespace twinccl::sim::detail
