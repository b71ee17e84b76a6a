// Topology::summary(): the numbers the analytic model needs, read off the sealed graph.
#include <algorithm>
#include <deque>
#include <limits>

#include "topology_data.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::topo {
namespace {

double min_or_zero(double current, double value, bool first) {
  return first ? value : std::min(current, value);
}

// Levels of network switches: declared ones kept; undeclared ones are 1 + the distance (in
// switch hops) from the nearest switch a NIC plugs into.
int network_levels(const TopologyData& d) {
  int declared = 0;
  bool undeclared = false;
  for (const Vertex& v : d.vertices) {
    if (v.kind != VertexKind::network_switch) continue;
    declared = std::max(declared, v.level);
    undeclared = undeclared || v.level == 0;
  }
  if (!undeclared) return declared;
  std::vector<int> level(d.vertices.size(), 0);
  std::deque<VertexId> queue;
  for (std::size_t v = 0; v < d.vertices.size(); ++v) {
    if (d.vertices[v].kind != VertexKind::nic) continue;
    for (LinkId l : d.links_of[v]) {
      const Link& link = d.links[static_cast<std::size_t>(l)];
      const VertexId n = link.a == static_cast<VertexId>(v) ? link.b : link.a;
      const auto ni = static_cast<std::size_t>(n);
      if (d.vertices[ni].kind == VertexKind::network_switch && level[ni] == 0) {
        level[ni] = 1;
        queue.push_back(n);
      }
    }
  }
  int deepest = 0;
  while (!queue.empty()) {
    const auto v = static_cast<std::size_t>(queue.front());
    queue.pop_front();
    deepest = std::max(deepest, level[v]);
    for (LinkId l : d.links_of[v]) {
      const Link& link = d.links[static_cast<std::size_t>(l)];
      const auto n = static_cast<std::size_t>(link.a == static_cast<VertexId>(v) ? link.b : link.a);
      if (d.vertices[n].kind == VertexKind::network_switch && level[n] == 0) {
        level[n] = level[v] + 1;
        queue.push_back(static_cast<VertexId>(n));
      }
    }
  }
  return std::max(declared, deepest);
}

}  // namespace

TopologySummary Topology::summary() const {
  const TopologyData& d = *data_;
  TopologySummary s;
  s.name = d.name;
  s.arch = d.facts.arch;
  s.nodes = d.node_count;
  s.gpus = gpu_count();
  s.pcie_gen = d.facts.pcie_gen;
  s.network = d.facts.network;
  s.host_launch_us = d.facts.host_launch_us;
  s.group_launch_us = d.facts.group_launch_us;
  s.network_hop_extra_us = d.facts.network_hop_extra_us;
  s.nic_delivered_share = d.facts.nic_delivered_share;
  s.p2p_net_chunk_bytes = d.facts.p2p_net_chunk_bytes;
  s.nccl_buffsize_bytes = d.facts.nccl_buffsize_bytes;
  s.memory_gbps = d.facts.memory_gbps > 0 ? d.facts.memory_gbps : device_memory_gbps(d.facts.arch);
  s.vertices = static_cast<int>(d.vertices.size());
  s.links = static_cast<int>(d.links.size());

  std::vector<int> gpus_in_node(static_cast<std::size_t>(d.node_count), 0);
  bool first_gpu = true;
  for (VertexId g : d.gpu_by_rank) {
    const auto gi = static_cast<std::size_t>(g);
    ++gpus_in_node[static_cast<std::size_t>(d.vertices[gi].node)];
    int lanes = 0;
    double nvlink = 0, pcie = 0;
    for (LinkId l : d.links_of[gi]) {
      const Link& link = d.links[static_cast<std::size_t>(l)];
      if (link.type == LinkType::nvlink) {
        lanes += link.lanes;
        nvlink += link.bandwidth_gbps;
      } else if (link.type == LinkType::pcie) {
        pcie = std::max(pcie, link.bandwidth_gbps);
      }
    }
    s.nvlinks_per_gpu = first_gpu ? lanes : std::min(s.nvlinks_per_gpu, lanes);
    s.nvlink_bandwidth_gbps = min_or_zero(s.nvlink_bandwidth_gbps, nvlink, first_gpu);
    s.nvlink_link_bandwidth_gbps =
        min_or_zero(s.nvlink_link_bandwidth_gbps, lanes > 0 ? nvlink / lanes : 0.0, first_gpu);
    s.pcie_bandwidth_gbps = min_or_zero(s.pcie_bandwidth_gbps, pcie, first_gpu);
    first_gpu = false;
  }
  for (int n : gpus_in_node) s.gpus_per_node = std::max(s.gpus_per_node, n);
  s.uniform_nodes = std::all_of(gpus_in_node.begin(), gpus_in_node.end(),
                                [&](int n) { return n == s.gpus_per_node; });

  const int node0 = d.vertices[static_cast<std::size_t>(d.gpu_by_rank.front())].node;
  for (VertexId v : d.node_members[static_cast<std::size_t>(node0)]) {
    const Vertex& vx = d.vertices[static_cast<std::size_t>(v)];
    if (vx.kind == VertexKind::nvswitch) s.nvswitches_per_node += vx.physical_switches;
  }
  // NICs: the fewest of any node with GPUs (a node that lost a NIC slows every ring through it).
  std::vector<int> nics_in_node(static_cast<std::size_t>(d.node_count), 0);
  for (const Vertex& vx : d.vertices) {
    if (vx.kind == VertexKind::nic && vx.node >= 0 && vx.node < d.node_count) {
      ++nics_in_node[static_cast<std::size_t>(vx.node)];
    }
  }
  bool first_node = true;
  for (std::size_t n = 0; n < nics_in_node.size(); ++n) {
    if (gpus_in_node[n] == 0) continue;
    s.nics_per_node = first_node ? nics_in_node[n] : std::min(s.nics_per_node, nics_in_node[n]);
    first_node = false;
  }
  bool first_nic = true;
  for (std::size_t v = 0; v < d.vertices.size(); ++v) {
    const Vertex& vx = d.vertices[v];
    if (vx.kind == VertexKind::nic) {
      // The port's line rate, no more than its fastest link into the network (a degraded leaf).
      double network = 0;
      for (LinkId l : d.links_of[v]) {
        const Link& link = d.links[static_cast<std::size_t>(l)];
        if (link.type == LinkType::network) network = std::max(network, link.bandwidth_gbps);
      }
      double port = vx.port_bandwidth_gbps;
      if (port <= 0) port = network;
      if (network > 0) port = std::min(port, network);
      s.nic_bandwidth_gbps = min_or_zero(s.nic_bandwidth_gbps, port, first_nic);
      first_nic = false;
    } else if (vx.kind == VertexKind::network_switch) {
      ++s.network_switches;
      const int ports = vx.radix > 0 ? vx.radix : static_cast<int>(d.links_of[v].size());
      s.network_switch_radix = std::max(s.network_switch_radix, ports);
    }
  }
  if (s.network_switches > 0) s.network_levels = network_levels(d);
  const bool modern = s.arch == GpuArch::hopper || s.arch == GpuArch::blackwell;
  s.nvls_capable = d.facts.nvls.value_or(modern && s.nvswitches_per_node > 0);
  return s;
}

}  // namespace twinccl::topo
