// The checks TopologyBuilder::seal() runs, against the caps in limits.h. Connectivity: GPUs do not
// forward (unless marked), so "every GPU reaches every GPU" is checked on the forwarding
// vertices: union-find joins forwarding vertices along links; two GPUs connect when they touch a
// common component or share a link. Usually one component touches every GPU and the check is
// linear (a count per component); otherwise pairs are checked, one GPU at a time, by marking the
// GPUs it reaches (kept to limits::max_gpus_without_common_fabric GPUs).
#include "validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <sstream>
#include <string>

#include "input_checks.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/limits.h"
#include "twinccl/topologies/network_nccl_env.h"

namespace twinccl::topo {
namespace {

// A name as messages show it: as is when short and printable, else cut and escaped.
std::string shown(const std::string& name) {
  const bool plain =
      name.size() <= limits::max_echo_bytes && std::none_of(name.begin(), name.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      });
  return plain ? name : input::echo(name);
}

std::string where(const TopologyData& d) { return "topology '" + shown(d.name) + "': "; }

bool in_range(double v, double lo, double hi) { return v >= lo && v <= hi; }  // false for NaN

// Empty, too long, or with control characters: the reason, or "" when the name is fine.
std::string name_problem(const std::string& name) {
  if (name.empty()) return "empty name";
  if (name.size() > limits::max_name_bytes) {
    return "name longer than " + std::to_string(limits::max_name_bytes) +
           " bytes (the cap): " + input::echo(name);
  }
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return "name with a control character: " + input::echo(name);
    }
  }
  return "";
}

std::string number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string vertex_label(const TopologyData& d, std::size_t v) {
  return std::string(to_string(d.vertices[v].kind)) + " '" + shown(d.vertices[v].name) + "'";
}

std::string link_label(const TopologyData& d, std::size_t l) {
  const Link& link = d.links[l];
  const auto name_of = [&](VertexId v) {
    return v >= 0 && static_cast<std::size_t>(v) < d.vertices.size()
               ? shown(d.vertices[static_cast<std::size_t>(v)].name)
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
  if (const std::string p = name_problem(d.name); !p.empty()) {
    throw ConfigError(where(d) + "topology " + p);
  }
  if (d.vertices.size() > static_cast<std::size_t>(limits::max_vertices)) {
    throw ConfigError(where(d) + std::to_string(d.vertices.size()) + " vertices, more than " +
                      std::to_string(limits::max_vertices) + " (the cap)");
  }
  if (gpus == 0) throw ConfigError(where(d) + "has no GPU (at least one vertex of kind gpu)");
  if (gpus > static_cast<std::size_t>(limits::max_gpus)) {
    throw ConfigError(where(d) + std::to_string(gpus) + " GPUs, more than " +
                      std::to_string(limits::max_gpus) + " (the cap)");
  }
  std::vector<std::size_t> owner_of_rank(gpus, d.vertices.size());
  for (std::size_t i = 0; i < d.vertices.size(); ++i) {
    const Vertex& v = d.vertices[i];
    const std::string label = where(d) + vertex_label(d, i);
    if (const std::string p = name_problem(v.name); !p.empty()) {
      throw ConfigError(where(d) + "vertex " + std::to_string(i) + ": " + p);
    }
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
    // Nodes are numbered from 0 and each holds a GPU; bounding by the vertex count keeps the
    // per-node tables small, and index_topology() names the first node without a GPU.
    if (v.node >= 0 && static_cast<std::size_t>(v.node) >= d.vertices.size()) {
      throw ConfigError(label + ": node must be in 0.." + std::to_string(d.vertices.size() - 1) +
                        " (nodes are numbered from 0 and each holds a GPU), got " +
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
    const auto int_in = [&](const char* field, int value, int lo, int hi) {
      if (value < lo || value > hi) {
        throw ConfigError(label + ": " + field + " must be in " + std::to_string(lo) + ".." +
                          std::to_string(hi) + ", got " + std::to_string(value));
      }
    };
    int_in("physical_switches", v.physical_switches, 1, limits::max_physical_switches);
    int_in("level", v.level, 0, limits::max_level);
    int_in("radix", v.radix, 0, limits::max_radix);
    if (v.port_bandwidth_gbps != 0 &&
        !in_range(v.port_bandwidth_gbps, limits::min_bandwidth_gbps, limits::max_bandwidth_gbps)) {
      throw ConfigError(label + ": port_bandwidth_gbps must be 0 (unknown) or in " +
                        number(limits::min_bandwidth_gbps) + ".." +
                        number(limits::max_bandwidth_gbps) + ", got " +
                        number(v.port_bandwidth_gbps));
    }
  }
}

void validate_links(const TopologyData& d) {
  const auto n = static_cast<VertexId>(d.vertices.size());
  if (d.links.size() > static_cast<std::size_t>(limits::max_links)) {
    throw ConfigError(where(d) + std::to_string(d.links.size()) + " links, more than " +
                      std::to_string(limits::max_links) + " (the cap)");
  }
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
    if (!in_range(l.bandwidth_gbps, limits::min_bandwidth_gbps, limits::max_bandwidth_gbps)) {
      throw ConfigError(
          label + ": bandwidth_gbps must be in " + number(limits::min_bandwidth_gbps) + ".." +
          number(limits::max_bandwidth_gbps) + " GB/s, got " + number(l.bandwidth_gbps));
    }
    if (!in_range(l.latency_us, 0.0, limits::max_latency_us)) {
      throw ConfigError(label + ": latency_us must be in 0.." + number(limits::max_latency_us) +
                        " (1 s), got " + number(l.latency_us));
    }
    if (l.lanes < 1 || l.lanes > limits::max_lanes) {
      throw ConfigError(label + ": lanes must be in 1.." + std::to_string(limits::max_lanes) +
                        ", got " + std::to_string(l.lanes));
    }
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
  if (!(d.facts.memory_gbps >= 0.0 && d.facts.memory_gbps <= 1e6)) {
    throw ConfigError(where(d) + "memory_gbps must be 0 (the arch's) or a GPU's memory bandwidth " +
                      "in GB/s up to 1e6, got " + std::to_string(d.facts.memory_gbps));
  }
  if (!(d.facts.host_launch_us >= 0.0 && d.facts.host_launch_us <= limits::max_host_launch_us)) {
    throw ConfigError(where(d) +
                      "host_launch_us must be 0 (the model's) or a launch cost in us up " + "to " +
                      std::to_string(limits::max_host_launch_us) + ", got " +
                      std::to_string(d.facts.host_launch_us));
  }
  if (!(d.facts.group_launch_us >= 0.0 && d.facts.group_launch_us <= limits::max_host_launch_us)) {
    throw ConfigError(where(d) + "group_launch_us must be 0 (the model's) or a launch cost in us " +
                      "up to " + std::to_string(limits::max_host_launch_us) + ", got " +
                      std::to_string(d.facts.group_launch_us));
  }
  if (!(std::abs(d.facts.network_hop_extra_us) <= limits::max_network_hop_extra_us)) {
    throw ConfigError(where(d) + "network_hop_extra_us must be within +-" +
                      std::to_string(limits::max_network_hop_extra_us) + " us, got " +
                      std::to_string(d.facts.network_hop_extra_us));
  }
  if (!(d.facts.nic_ports >= 0 && d.facts.nic_ports <= limits::max_nic_ports)) {
    throw ConfigError(fmt::format(
        "{}nic_ports must be 0 (one device a card) or the RDMA devices one NIC card presents, "
        "1 .. {}, got {}",
        where(d), limits::max_nic_ports, d.facts.nic_ports));
  }
  const double share = d.facts.nic_delivered_share;
  if (!(share == 0.0 ||
        (share >= limits::min_nic_delivered_share && share <= limits::max_nic_delivered_share))) {
    throw ConfigError(fmt::format(
        "{}nic_delivered_share must be 0 (the network class's) or a share of the NICs' rate in "
        "{:g} .. {:g}, got {}",
        where(d), limits::min_nic_delivered_share, limits::max_nic_delivered_share, share));
  }
  const double trend = d.facts.nic_share_per_doubling;
  if (!(std::abs(trend) <= limits::max_nic_share_per_doubling) ||
      (trend != 0.0 &&
       !(d.facts.nic_share_nodes >= 1 && d.facts.nic_share_nodes <= limits::max_nodes))) {
    throw ConfigError(fmt::format(
        "{}nic_share_per_doubling must be within +-{:g} (the share's change per doubling of "
        "nodes) with nic_share_nodes, the node count it starts from, 1 .. {}; got {} from {}",
        where(d), limits::max_nic_share_per_doubling, limits::max_nodes, trend,
        d.facts.nic_share_nodes));
  }
  // 0 = not set here: the call runs with `unset`, the network's export or NCCL's default
  // (network_nccl_env.h), which the message names.
  const NetworkNcclEnv network_env = network_nccl_env(d.facts.network);
  const auto check_nccl_buffer = [&](double bytes, double exported, double nccl, const char* name,
                                     const char* env) {
    if (bytes == 0.0 || (bytes >= limits::min_nccl_buffer_bytes &&
                         bytes <= limits::max_nccl_buffer_bytes && bytes == std::floor(bytes))) {
      return;
    }
    const NcclBuffer unset = nccl_buffer(0.0, exported, nccl);
    std::ostringstream m;
    m.precision(17);
    m << where(d) << name << " (" << env << ") must be 0 (not set here: "
      << (unset.source == NcclBuffer::Source::network ? network_env.exporter + std::string("'s")
                                                      : std::string("NCCL's"))
      << " " << unset.bytes << ") or whole bytes from " << limits::min_nccl_buffer_bytes << " to "
      << limits::max_nccl_buffer_bytes << ", got " << bytes;
    throw ConfigError(m.str());
  };
  check_nccl_buffer(d.facts.p2p_net_chunk_bytes, network_env.p2p_net_chunk_bytes,
                    kNcclDefaultP2pNetChunkBytes, "p2p_net_chunk_bytes", "NCCL_P2P_NET_CHUNKSIZE");
  check_nccl_buffer(d.facts.nccl_buffsize_bytes, network_env.nccl_buffsize_bytes,
                    kNcclDefaultBuffsizeBytes, "nccl_buffsize_bytes", "NCCL_BUFFSIZE");
  if (d.facts.nvls.value_or(false)) {
    const bool has_nvswitch =
        std::any_of(d.vertices.begin(), d.vertices.end(),
                    [](const Vertex& v) { return v.kind == VertexKind::nvswitch; });
    if (!has_nvswitch) throw ConfigError(where(d) + "nvls is true but there is no nvswitch vertex");
  }
}

void validate_connected(const TopologyData& d) {
  const std::size_t gpus = d.gpu_by_rank.size();
  if (gpus <= 1) return;
  UnionFind components(d.vertices.size());
  for (const Link& l : d.links) {
    const auto a = static_cast<std::size_t>(l.a), b = static_cast<std::size_t>(l.b);
    if (d.vertices[a].forwards && d.vertices[b].forwards) components.join(a, b);
  }
  // Components each GPU touches (distinct); a forwarding GPU is in its own component.
  std::vector<std::vector<std::size_t>> touches(gpus);
  for (std::size_t r = 0; r < gpus; ++r) {
    const auto g = static_cast<std::size_t>(d.gpu_by_rank[r]);
    if (d.vertices[g].forwards) touches[r].push_back(components.find(g));
    for (LinkId l : d.links_of[g]) {
      const auto other = static_cast<std::size_t>(d.links[static_cast<std::size_t>(l)].a ==
                                                          static_cast<VertexId>(g)
                                                      ? d.links[static_cast<std::size_t>(l)].b
                                                      : d.links[static_cast<std::size_t>(l)].a);
      if (d.vertices[other].forwards) touches[r].push_back(components.find(other));
    }
    std::sort(touches[r].begin(), touches[r].end());
    touches[r].erase(std::unique(touches[r].begin(), touches[r].end()), touches[r].end());
  }
  // Fast path: one component that every GPU touches.
  std::vector<std::size_t> touched_by(d.vertices.size(), 0);
  for (const auto& t : touches) {
    for (std::size_t c : t) {
      if (++touched_by[c] == gpus) return;
    }
  }
  if (gpus > static_cast<std::size_t>(limits::max_gpus_without_common_fabric)) {
    throw ConfigError(where(d) + "no forwarding fabric (switch, CPU, PCIe) joins all " +
                      std::to_string(gpus) +
                      " GPUs, and checking direct GPU-GPU links pair by pair is limited to " +
                      std::to_string(limits::max_gpus_without_common_fabric) +
                      " GPUs (the cap); join the GPUs through a switch");
  }
  std::vector<std::vector<std::size_t>> ranks_of(d.vertices.size());
  for (std::size_t r = 0; r < gpus; ++r) {
    for (std::size_t c : touches[r]) ranks_of[c].push_back(r);
  }
  // For each GPU, mark every GPU it reaches (through a shared component or a direct link).
  std::vector<std::size_t> mark(gpus, gpus);
  for (std::size_t ra = 0; ra < gpus; ++ra) {
    std::size_t reached = 0;
    const auto reach = [&](std::size_t rb) {
      if (mark[rb] != ra) {
        mark[rb] = ra;
        ++reached;
      }
    };
    reach(ra);
    for (std::size_t c : touches[ra]) {
      for (std::size_t rb : ranks_of[c]) reach(rb);
      if (reached == gpus) break;
    }
    const auto ga = static_cast<VertexId>(d.gpu_by_rank[ra]);
    for (LinkId l : d.links_of[static_cast<std::size_t>(ga)]) {
      const Link& link = d.links[static_cast<std::size_t>(l)];
      const Vertex& other = d.vertices[static_cast<std::size_t>(link.a == ga ? link.b : link.a)];
      if (other.kind == VertexKind::gpu) reach(static_cast<std::size_t>(other.rank));
    }
    if (reached == gpus) continue;
    const std::size_t rb = static_cast<std::size_t>(
        std::find_if(mark.begin(), mark.end(), [&](std::size_t m) { return m != ra; }) -
        mark.begin());
    throw ConfigError(where(d) + vertex_label(d, static_cast<std::size_t>(d.gpu_by_rank[rb])) +
                      " (rank " + std::to_string(rb) + ") cannot reach " +
                      vertex_label(d, static_cast<std::size_t>(d.gpu_by_rank[ra])) + " (rank " +
                      std::to_string(ra) + "): the GPUs are not connected");
  }
}

}  // namespace twinccl::topo
