// Routing between GPUs; see router.h for how it works and routing_rule() for the rule in words.
#include "router.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <utility>

#include "topology_data.h"
#include "twinccl/errors.h"

namespace twinccl::topo {
namespace {

constexpr RouteCost kUnreachable{std::numeric_limits<int>::max(), 0};

RouteCost add(RouteCost a, RouteCost b) {
  if (a == kUnreachable || b == kUnreachable) return kUnreachable;
  return {a.hops + b.hops, a.latency_ns + b.latency_ns};
}

VertexId other(const TopologyData& d, LinkId l, VertexId from) {
  const Link& link = d.links[static_cast<std::size_t>(l)];
  return link.a == from ? link.b : link.a;
}

}  // namespace

Router::Router(const TopologyData& data) : data_(data) {
  switch_maps_.resize(data_.shared_members.size());
  shared_links_.resize(data_.shared_members.size());
  for (std::size_t s = 0; s < data_.shared_members.size(); ++s) {
    const VertexId v = data_.shared_members[s];
    for (LinkId l : data_.links_of[static_cast<std::size_t>(v)]) {
      if (data_.vertices[static_cast<std::size_t>(other(data_, l, v))].node == -1) {
        shared_links_[s].push_back(l);
      }
    }
  }
  home_nic_.assign(data_.gpu_by_rank.size(), -1);
  for (int node = 0; node < data_.node_count; ++node) choose_home_nics(node);
}

void Router::choose_home_nics(int node) {
  const RegionRef r{Region::node, node};
  std::vector<VertexId> nics, gpus;  // in vertex id order
  for (VertexId v : data_.node_members[static_cast<std::size_t>(node)]) {
    const VertexKind kind = data_.vertices[static_cast<std::size_t>(v)].kind;
    if (kind == VertexKind::nic) nics.push_back(v);
    if (kind == VertexKind::gpu) gpus.push_back(v);
  }
  if (nics.empty() || gpus.empty()) return;
  if (std::min(nics.size(), gpus.size()) > kExactHomeNicSearches) {
    nearest_nics(r, nics, gpus);
    return;
  }
  // One distance map per NIC or per GPU, whichever are fewer (distances are symmetric).
  const bool per_nic = nics.size() <= gpus.size();
  std::vector<std::vector<RouteCost>> maps;
  for (VertexId v : per_nic ? nics : gpus) maps.push_back(distances_to(v, r));
  // Rails by NIC local index (a node that lost NIC 3 keeps NIC 7 on rail 7).
  int rails = 0;
  for (VertexId n : nics) {
    rails = std::max(rails, data_.vertices[static_cast<std::size_t>(n)].local_index + 1);
  }
  rails = std::max(rails, 1);
  for (std::size_t gi = 0; gi < gpus.size(); ++gi) {
    const Vertex& g = data_.vertices[static_cast<std::size_t>(gpus[gi])];
    // Nearest NIC; on a tie the NIC on this GPU's rail (local index = GPU index mod NICs).
    VertexId best = -1;
    RouteCost best_cost = kUnreachable;
    bool best_on_rail = false;
    for (std::size_t ni = 0; ni < nics.size(); ++ni) {
      const Vertex& nic = data_.vertices[static_cast<std::size_t>(nics[ni])];
      const RouteCost c = per_nic ? maps[ni][static_cast<std::size_t>(slot_in(r, gpus[gi]))]
                                  : maps[gi][static_cast<std::size_t>(slot_in(r, nics[ni]))];
      if (c == kUnreachable) continue;
      const bool on_rail = nic.local_index == g.local_index % rails;
      if (c < best_cost || (c == best_cost && on_rail && !best_on_rail)) {
        best = nics[ni];
        best_cost = c;
        best_on_rail = on_rail;
      }
    }
    home_nic_[static_cast<std::size_t>(g.rank)] = best;
  }
}

void Router::nearest_nics(RegionRef r, const std::vector<VertexId>& nics,
                          const std::vector<VertexId>& gpus) {
  // One Dijkstra from all NICs at once; a label is (cost, NIC), so ties go to the lowest NIC id.
  using Label = std::pair<RouteCost, VertexId>;
  std::vector<Label> best(region_size(r), Label{kUnreachable, -1});
  using Item = std::pair<Label, VertexId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  for (VertexId nic : nics) {
    best[static_cast<std::size_t>(slot_in(r, nic))] = {RouteCost{}, nic};
    queue.push({{RouteCost{}, nic}, nic});
  }
  while (!queue.empty()) {
    const auto [label, v] = queue.top();
    queue.pop();
    if (best[static_cast<std::size_t>(slot_in(r, v))] < label) continue;
    if (v != label.second && !data_.vertices[static_cast<std::size_t>(v)].forwards) continue;
    for (LinkId l : data_.links_of[static_cast<std::size_t>(v)]) {
      const VertexId n = other(data_, l, v);
      const int s = slot_in(r, n);
      if (s < 0) continue;
      const Label c{add(label.first, link_cost(l)), label.second};
      Label& known = best[static_cast<std::size_t>(s)];
      if (known.first == kUnreachable || c < known) {
        known = c;
        queue.push({c, n});
      }
    }
  }
  for (VertexId g : gpus) {
    const Label& b = best[static_cast<std::size_t>(slot_in(r, g))];
    if (b.first != kUnreachable) {
      home_nic_[static_cast<std::size_t>(data_.vertices[static_cast<std::size_t>(g)].rank)] =
          b.second;
    }
  }
}

std::optional<VertexId> Router::home_nic(int rank) const {
  const VertexId v = home_nic_.at(static_cast<std::size_t>(rank));
  if (v < 0) return std::nullopt;
  return v;
}

RouteCost Router::link_cost(LinkId l) const {
  const double us = data_.links[static_cast<std::size_t>(l)].latency_us;
  return {1, static_cast<std::int64_t>(std::llround(us * 1000.0))};
}

int Router::slot_in(RegionRef r, VertexId v) const {
  const Vertex& vx = data_.vertices[static_cast<std::size_t>(v)];
  switch (r.region) {
    case Region::whole:
      return v;
    case Region::node:
      return vx.node == r.node ? data_.slot[static_cast<std::size_t>(v)] : -1;
    case Region::shared:
      return vx.node == -1 ? data_.slot[static_cast<std::size_t>(v)] : -1;
  }
  return -1;
}

std::size_t Router::region_size(RegionRef r) const {
  switch (r.region) {
    case Region::whole:
      return data_.vertices.size();
    case Region::node:
      return data_.node_members[static_cast<std::size_t>(r.node)].size();
    case Region::shared:
      return data_.shared_members.size();
  }
  return 0;
}

std::vector<RouteCost> Router::distances_to(VertexId target, RegionRef r) const {
  std::vector<RouteCost> dist(region_size(r), kUnreachable);
  using Item = std::pair<RouteCost, VertexId>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  dist[static_cast<std::size_t>(slot_in(r, target))] = RouteCost{};
  queue.push({RouteCost{}, target});
  while (!queue.empty()) {
    const auto [cost, v] = queue.top();
    queue.pop();
    if (dist[static_cast<std::size_t>(slot_in(r, v))] < cost) continue;
    if (v != target && !data_.vertices[static_cast<std::size_t>(v)].forwards) continue;
    for (LinkId l : data_.links_of[static_cast<std::size_t>(v)]) {
      const VertexId n = other(data_, l, v);
      const int s = slot_in(r, n);
      if (s < 0) continue;
      const RouteCost c = add(cost, link_cost(l));
      if (c < dist[static_cast<std::size_t>(s)]) {
        dist[static_cast<std::size_t>(s)] = c;
        queue.push({c, n});
      }
    }
  }
  return dist;
}

bool Router::walk(VertexId from, VertexId target, RegionRef r, const std::vector<RouteCost>& dist,
                  int key, std::vector<LinkId>& out) const {
  if (dist[static_cast<std::size_t>(slot_in(r, from))] == kUnreachable) return false;
  std::vector<LinkId> candidates;
  VertexId v = from;
  while (v != target) {
    const RouteCost here = dist[static_cast<std::size_t>(slot_in(r, v))];
    candidates.clear();
    for (LinkId l : data_.links_of[static_cast<std::size_t>(v)]) {
      const VertexId n = other(data_, l, v);
      const int s = slot_in(r, n);
      if (s < 0 || (n != target && !data_.vertices[static_cast<std::size_t>(n)].forwards)) continue;
      if (add(dist[static_cast<std::size_t>(s)], link_cost(l)) == here) candidates.push_back(l);
    }
    if (candidates.empty()) {
      throw InternalError("topology '" + data_.name + "': route walk stuck at vertex '" +
                          data_.vertices[static_cast<std::size_t>(v)].name + "'");
    }
    const LinkId pick = candidates[static_cast<std::size_t>(key) % candidates.size()];
    out.push_back(pick);
    v = other(data_, pick, v);
  }
  return true;
}

std::shared_ptr<const std::vector<RouteCost>> Router::switch_map(VertexId network_switch) const {
  const auto s = static_cast<std::size_t>(data_.slot[static_cast<std::size_t>(network_switch)]);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (switch_maps_[s]) return switch_maps_[s];
  }
  auto map = std::make_shared<const std::vector<RouteCost>>(
      distances_to(network_switch, RegionRef{Region::shared, -1}));
  std::lock_guard<std::mutex> lock(mutex_);
  if (!switch_maps_[s]) switch_maps_[s] = map;
  return switch_maps_[s];
}

bool Router::network_walk(VertexId nic_a, VertexId nic_b, int key, std::vector<LinkId>& out) const {
  const RegionRef shared{Region::shared, -1};
  // Costs to nic_b, through each of its uplinks to a network switch.
  struct Uplink {
    LinkId link;
    std::shared_ptr<const std::vector<RouteCost>> map;
  };
  std::vector<Uplink> uplinks;
  for (LinkId l : data_.links_of[static_cast<std::size_t>(nic_b)]) {
    const VertexId n = other(data_, l, nic_b);
    if (slot_in(shared, n) >= 0) uplinks.push_back({l, switch_map(n)});
  }
  const auto cost_to_b = [&](VertexId v) {
    if (v == nic_b) return RouteCost{};
    const int s = slot_in(shared, v);
    if (s < 0) return kUnreachable;
    RouteCost best = kUnreachable;
    for (const Uplink& u : uplinks) {
      const RouteCost c = add((*u.map)[static_cast<std::size_t>(s)], link_cost(u.link));
      if (c < best) best = c;
    }
    return best;
  };
  std::vector<LinkId> candidates;
  VertexId v = nic_a;
  RouteCost here = kUnreachable;
  for (LinkId l : data_.links_of[static_cast<std::size_t>(nic_a)]) {
    const RouteCost c = add(link_cost(l), cost_to_b(other(data_, l, nic_a)));
    if (c < here) here = c;
  }
  if (here == kUnreachable) return false;
  while (v != nic_b) {
    candidates.clear();
    const auto consider = [&](LinkId l) {
      const VertexId n = other(data_, l, v);
      if (n != nic_b && !data_.vertices[static_cast<std::size_t>(n)].forwards) return;
      if (add(link_cost(l), cost_to_b(n)) == here) candidates.push_back(l);
    };
    if (const int s = slot_in(shared, v); s < 0) {
      for (LinkId l : data_.links_of[static_cast<std::size_t>(v)]) consider(l);  // nic_a
    } else {
      // Past nic_a only shared vertices and nic_b lead on: a switch with thousands of NIC
      // ports is not scanned port by port.
      for (LinkId l : shared_links_[static_cast<std::size_t>(s)]) consider(l);
      for (LinkId l : data_.links_of[static_cast<std::size_t>(nic_b)]) {
        if (other(data_, l, nic_b) == v) consider(l);
      }
      std::sort(candidates.begin(), candidates.end());
    }
    if (candidates.empty()) return false;
    const LinkId pick = candidates[static_cast<std::size_t>(key) % candidates.size()];
    out.push_back(pick);
    v = other(data_, pick, v);
    here = cost_to_b(v);
  }
  return true;
}

std::vector<LinkId> Router::global_route(VertexId a, VertexId b, int key) const {
  const RegionRef whole{Region::whole, -1};
  std::vector<LinkId> out;
  if (!walk(a, b, whole, distances_to(b, whole), key, out)) {
    throw InternalError("topology '" + data_.name + "': no route from '" +
                        data_.vertices[static_cast<std::size_t>(a)].name + "' to '" +
                        data_.vertices[static_cast<std::size_t>(b)].name +
                        "' although the topology was validated as connected");
  }
  return out;
}

std::vector<LinkId> Router::route(int rank_a, int rank_b) const {
  std::vector<LinkId> out;
  if (rank_a == rank_b) return out;
  const VertexId a = data_.gpu_by_rank[static_cast<std::size_t>(rank_a)];
  const VertexId b = data_.gpu_by_rank[static_cast<std::size_t>(rank_b)];
  const int node_a = data_.vertices[static_cast<std::size_t>(a)].node;
  const int node_b = data_.vertices[static_cast<std::size_t>(b)].node;
  const int key = rank_b;
  if (node_a == node_b) {
    const RegionRef r{Region::node, node_a};
    if (walk(a, b, r, distances_to(b, r), key, out)) return out;
    return global_route(a, b, key);
  }
  const VertexId nic_a = home_nic_[static_cast<std::size_t>(rank_a)];
  const VertexId nic_b = home_nic_[static_cast<std::size_t>(rank_b)];
  if (nic_a >= 0 && nic_b >= 0) {
    const RegionRef ra{Region::node, node_a};
    const RegionRef rb{Region::node, node_b};
    if (walk(a, nic_a, ra, distances_to(nic_a, ra), key, out) &&
        network_walk(nic_a, nic_b, node_b, out) &&
        walk(nic_b, b, rb, distances_to(b, rb), key, out)) {
      return out;
    }
  }
  return global_route(a, b, key);
}

}  // namespace twinccl::topo
