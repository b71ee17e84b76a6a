// The checks TopologyBuilder::seal() runs. Connectivity: GPUs do not forward (unless marked), so
// "every GPU reaches every GPU" is checked on the forwarding vertices: union-find joins
// forwarding vertices along links; two GPUs connect when they touch a common component or share
// a link. Usually one component touches every GPU and the check is linear.
#include "validate.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <sstream>
#include <string>

#include "twinccl/errors.h"

namespace twinccl::topo {
namespace {

std::string where(const TopologyData& d) { return "topology '" + d.name + "': "; }

std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string vertex_label(const TopologyData& d, std::size_t v) {
  return std::string(to_string(d.vertices[v].kind)) + " '" + d.vertices[v].name + "'";
}

std::string link_label(const TopologyData& d, std::size_t l) {
  const Link& link = d.links[l];
  const auto name_of = [&](VertexId v) {
    return v >= 0 && static_cast<std::size_t>(v) < d.vertices.size()
               ? d.vertices[static_cast<std::size_t>(v)].name
               : "#" + std::to_string(v);
  };
  return "link " + std::to_string(l) + " (" + name_of(link.a) + " <-> " + name_of(link.b) + ")";
}

struct UnionFind {
  std::vector<std::size_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  std::size_t find(std::size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(std::size_t a, std::size_t b) { parent[find(a)] = find(b); }
};

}  // namespace

void validate_vertices(const TopologyData& d) {
  const std::size_t gpus = static_cast<std::size_t>(
      std::count_if(d.vertices.begin(), d.vertices.end(),
                    [](const Vertex& v) { return v.kind == VertexKind::gpu; }));
  if (gpus == 0) throw ConfigError(where(d) + "has no GPU (at least one vertex of kind gpu)");
  std::vector<std::size_t> owner_of_rank(gpus, d.vertices.size());
  for (std::size_t i = 0; i < d.vertices.size(); ++i) {
    const Vertex& v = d.vertices[i];
    const std::string label = where(d) + vertex_label(d, i);
    if (v.name.empty())
      throw ConfigError(where(d) + "vertex " + std::to_string(i) + ": empty name");
    const bool shared_allowed =
        v.kind == VertexKind::network_switch || v.kind == VertexKind::nvswitch;
    if (v.node < -1 || (v.node == -1 && !shared_allowed)) {
      throw ConfigError(label + ": node must be >= 0 for a " + std::string(to_string(v.kind)) +
                        ", got " + std::to_string(v.node));
    }
    if (v.kind == VertexKind::network_switch && v.node != -1) {
      throw ConfigError(label +
                        ": node must be -1 for a network switch (shared by all nodes), got " +
                        std::to_string(v.node));
    }
    if (v.kind == VertexKind::gpu) {
      if (v.rank < 0 || static_cast<std::size_t>(v.rank) >= gpus) {
        throw ConfigError(label + ": rank must be in 0.." + std::to_string(gpus - 1) + ", got " +
                          std::to_string(v.rank));
      }
      std::size_t& owner = owner_of_rank[static_cast<std::size_t>(v.rank)];
      if (owner != d.vertices.size()) {
        throw ConfigError(label + ": rank " + std::to_string(v.rank) + " already belongs to " +
                          vertex_label(d, owner));
      }
      owner = i;
    }
    if (v.physical_switches < 1) {
      throw ConfigError(label + ": physical_switches must be >= 1, got " +
                        std::to_string(v.physical_switches));
    }
    if (v.level < 0)
      throw ConfigError(label + ": level must be >= 0, got " + std::to_string(v.level));
    if (v.radix < 0)
      throw ConfigError(label + ": radix must be >= 0, got " + std::to_string(v.radix));
    if (!std::isfinite(v.port_bandwidth_gbps) || v.port_bandwidth_gbps < 0) {
      throw ConfigError(label + ": port_bandwidth_gbps must be >= 0 and finite, got " +
                        number(v.port_bandwidth_gbps));
    }
  }
}

void validate_links(const TopologyData& d) {
  const auto n = static_cast<VertexId>(d.vertices.size());
  for (std::size_t i = 0; i < d.links.size(); ++i) {
    const Link& l = d.links[i];
    const std::string label = where(d) + link_label(d, i);
    for (const auto& [end, v] : {std::pair{"a", l.a}, std::pair{"b", l.b}}) {
      if (v < 0 || v >= n) {
        throw ConfigError(label + ": endpoint " + end + " = " + std::to_string(v) +
                          " is not a vertex (" + std::to_string(n) + " vertices)");
      }
    }
    if (l.a == l.b) throw ConfigError(label + ": a link cannot join a vertex to itself");
    if (!std::isfinite(l.bandwidth_gbps) || l.bandwidth_gbps <= 0) {
      throw ConfigError(label + ": bandwidth_gbps must be > 0 and finite, got " +
                        number(l.bandwidth_gbps));
    }
    if (!std::isfinite(l.latency_us) || l.latency_us < 0) {
      throw ConfigError(label + ": latency_us must be >= 0 and finite, got " +
                        number(l.latency_us));
    }
    if (l.lanes < 1)
      throw ConfigError(label + ": lanes must be >= 1, got " + std::to_string(l.lanes));
  }
}

void index_topology(TopologyData& d) {
  const std::size_t n = d.vertices.size();
  d.links_of.assign(n, {});
  for (std::size_t l = 0; l < d.links.size(); ++l) {
    d.links_of[static_cast<std::size_t>(d.links[l].a)].push_back(static_cast<LinkId>(l));
    d.links_of[static_cast<std::size_t>(d.links[l].b)].push_back(static_cast<LinkId>(l));
  }
  d.by_name.clear();
  int max_node = -1;
  for (std::size_t v = 0; v < n; ++v) {
    d.by_name.emplace(d.vertices[v].name, static_cast<VertexId>(v));
    max_node = std::max(max_node, d.vertices[v].node);
  }
  d.node_count = max_node + 1;
  d.node_members.assign(static_cast<std::size_t>(d.node_count), {});
  d.shared_members.clear();
  d.slot.assign(n, -1);
  d.gpu_by_rank.clear();
  for (std::size_t v = 0; v < n; ++v) {
    const Vertex& vx = d.vertices[v];
    auto& members =
        vx.node < 0 ? d.shared_members : d.node_members[static_cast<std::size_t>(vx.node)];
    d.slot[v] = static_cast<int>(members.size());
    members.push_back(static_cast<VertexId>(v));
    if (vx.kind == VertexKind::gpu) {
      if (d.gpu_by_rank.size() <= static_cast<std::size_t>(vx.rank)) {
        d.gpu_by_rank.resize(static_cast<std::size_t>(vx.rank) + 1, -1);
      }
      d.gpu_by_rank[static_cast<std::size_t>(vx.rank)] = static_cast<VertexId>(v);
    }
  }
  for (int node = 0; node < d.node_count; ++node) {
    const auto& members = d.node_members[static_cast<std::size_t>(node)];
    const bool has_gpu = std::any_of(members.begin(), members.end(), [&](VertexId v) {
      return d.vertices[static_cast<std::size_t>(v)].kind == VertexKind::gpu;
    });
    if (!has_gpu) {
      throw ConfigError(where(d) + "node " + std::to_string(node) +
                        " has no GPU (nodes are numbered 0.." + std::to_string(d.node_count - 1) +
                        " and each holds at least one GPU)");
    }
  }
}

void validate_facts(const TopologyData& d) {
  if (d.facts.pcie_gen < 0 || d.facts.pcie_gen > 6) {
    throw ConfigError(where(d) + "pcie_gen must be 0 (unknown) or 1..6, got " +
                      std::to_string(d.facts.pcie_gen));
  }
  if (d.facts.nvls.value_or(false)) {
    const bool has_nvswitch =
        std::any_of(d.vertices.begin(), d.vertices.end(),
                    [](const Vertex& v) { return v.kind == VertexKind::nvswitch; });
    if (!has_nvswitch) throw ConfigError(where(d) + "nvls is true but there is no nvswitch vertex");
  }
}

void validate_connected(const TopologyData& d) {
  UnionFind components(d.vertices.size());
  for (const Link& l : d.links) {
    const auto a = static_cast<std::size_t>(l.a), b = static_cast<std::size_t>(l.b);
    if (d.vertices[a].forwards && d.vertices[b].forwards) components.join(a, b);
  }
  // Components each GPU touches; a forwarding GPU is in its own component.
  std::vector<std::set<std::size_t>> touches(d.gpu_by_rank.size());
  for (std::size_t r = 0; r < d.gpu_by_rank.size(); ++r) {
    const auto g = static_cast<std::size_t>(d.gpu_by_rank[r]);
    if (d.vertices[g].forwards) touches[r].insert(components.find(g));
    for (LinkId l : d.links_of[g]) {
      const Link& link = d.links[static_cast<std::size_t>(l)];
      const auto other =
          static_cast<std::size_t>(link.a == static_cast<VertexId>(g) ? link.b : link.a);
      if (d.vertices[other].forwards) touches[r].insert(components.find(other));
    }
  }
  // Fast path: one component that every GPU touches.
  for (std::size_t c : touches[0]) {
    if (std::all_of(touches.begin(), touches.end(),
                    [&](const auto& t) { return t.count(c) > 0; })) {
      return;
    }
  }
  const auto linked = [&](std::size_t ra, std::size_t rb) {
    for (std::size_t c : touches[ra]) {
      if (touches[rb].count(c) > 0) return true;
    }
    const auto ga = static_cast<VertexId>(d.gpu_by_rank[ra]);
    const auto gb = static_cast<VertexId>(d.gpu_by_rank[rb]);
    for (LinkId l : d.links_of[static_cast<std::size_t>(ga)]) {
      const Link& link = d.links[static_cast<std::size_t>(l)];
      if (link.a == gb || link.b == gb) return true;
    }
    return false;
  };
  for (std::size_t ra = 0; ra < touches.size(); ++ra) {
    for (std::size_t rb = ra + 1; rb < touches.size(); ++rb) {
      if (linked(ra, rb)) continue;
      throw ConfigError(where(d) + vertex_label(d, static_cast<std::size_t>(d.gpu_by_rank[rb])) +
                        " (rank " + std::to_string(rb) + ") cannot reach " +
                        vertex_label(d, static_cast<std::size_t>(d.gpu_by_rank[ra])) + " (rank " +
                        std::to_string(ra) + "): the GPUs are not connected");
    }
  }
}

}  // namespace twinccl::topo
