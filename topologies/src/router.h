// Internal: deterministic shortest-path routing between GPUs (rule: routing_rule() in topology.h).
//
// How it works. A route is the cheapest path by (hops, then latency in whole nanoseconds), found
// with Dijkstra from the destination over one region of the graph: one node's vertices, the
// shared network switches, or (fallback) the whole graph. Only vertices that forward may be
// passed through. Walking from the source, every step keeps the cost-to-destination exact; when
// several links do (equal-cost multi-path), link number (key mod count) among them, in ascending
// link id order, is taken: key = destination rank inside nodes and destination node index in the
// network (so one rail's traffic to different nodes spreads over the spines); ECMP-like,
// repeatable. Inter-node routes are GPU -> home NIC -> network -> home NIC -> GPU; distance maps
// towards each network switch are computed once, on first use, so a 1024-node cluster routes in
// microseconds.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "twinccl/topologies/topology.h"

namespace twinccl::topo {

struct TopologyData;

struct RouteCost {
  int hops = 0;
  std::int64_t latency_ns = 0;
  auto operator<=>(const RouteCost&) const = default;
};

class Router {
 public:
  explicit Router(const TopologyData& data);  // computes every GPU's home NIC

  std::vector<LinkId> route(int rank_a, int rank_b) const;
  std::optional<VertexId> home_nic(int rank) const;

 private:
  enum class Region { node, shared, whole };
  struct RegionRef {
    Region region = Region::whole;
    int node = -1;
  };

  int slot_in(RegionRef r, VertexId v) const;  // -1 when v is outside r
  std::size_t region_size(RegionRef r) const;
  std::vector<RouteCost> distances_to(VertexId target, RegionRef r) const;
  // Appends the links of a cheapest walk from `from` to `target` using `dist` (from distances_to).
  bool walk(VertexId from, VertexId target, RegionRef r, const std::vector<RouteCost>& dist,
            int key, std::vector<LinkId>& out) const;
  bool network_walk(VertexId nic_a, VertexId nic_b, int key, std::vector<LinkId>& out) const;
  std::shared_ptr<const std::vector<RouteCost>> switch_map(VertexId network_switch) const;
  std::vector<LinkId> global_route(VertexId a, VertexId b, int key) const;
  RouteCost link_cost(LinkId l) const;
  void choose_home_nics(int node);
  // Nodes with more NICs and GPUs than kExactHomeNicSearches: nearest NIC in one search, ties to
  // the lowest vertex id (the rail preference is dropped; no real server is that large).
  void nearest_nics(RegionRef r, const std::vector<VertexId>& nics,
                    const std::vector<VertexId>& gpus);
  static constexpr std::size_t kExactHomeNicSearches = 32;

  const TopologyData& data_;
  std::vector<VertexId> home_nic_;                 // per rank, -1 when none
  std::vector<std::vector<LinkId>> shared_links_;  // per shared slot: links to shared vertices
  mutable std::mutex mutex_;
  mutable std::vector<std::shared_ptr<const std::vector<RouteCost>>> switch_maps_;
};

}  // namespace twinccl::topo
