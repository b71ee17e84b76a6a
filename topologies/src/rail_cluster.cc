// rail_cluster(node, N): N copies of one node (an imported NCCL_TOPO_FILE: clouds ship one node's
// file) on a rail-optimized two-level fat-tree, as h100-cluster-N joins DGX H100s.
//
// How it works. Every vertex and link of the node is copied N times (names prefixed "n3.", node
// index n, GPU ranks n * gpus + local rank). NIC i of each node (in the node's NIC order) is rail
// i and links to the leaf of rail i of its scalable unit (32 nodes, as a SuperPOD SU); every leaf
// links to every one of 32 spines (the presets' fabric, presets/rail_fabric.h). Network links run
// at the fastest NIC's line rate, so 32 up = 32 down ports per leaf: non-blocking, like the
// preset. With 2 nodes and 1 NIC each:
//
//          spine0 ... spine31
//             |          |
//            leaf.su0.r0 (rail 0)
//             |          |
//     n0.nic0              n1.nic0
//        |                    |
//     n0 (the file's node)    n1 (its copy)
#include <algorithm>
#include <string>
#include <vector>

#include "../presets/rail_fabric.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/nccl_xml_hints.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {

Topology rail_cluster(const Topology& node, int nodes) {
  constexpr int kMaxNodes = 1024;
  if (nodes < 1 || nodes > kMaxNodes) {
    throw InvalidArgument("--nodes: must be in 1.." + std::to_string(kMaxNodes) + ", got " +
                          std::to_string(nodes));
  }
  if (node.node_count() != 1) {
    throw InvalidArgument("--nodes repeats a one-node topology; " + node.name() + " has " +
                          std::to_string(node.node_count()) + " nodes");
  }
  std::vector<VertexId> nic_vertices;
  double nic_gbps = 0;
  for (VertexId v = 0; v < static_cast<VertexId>(node.vertices().size()); ++v) {
    const Vertex& x = node.vertex(v);
    if (x.kind == VertexKind::network_switch) {
      throw InvalidArgument("--nodes: " + node.name() + " already has a network (" + x.name + ")");
    }
    if (x.kind == VertexKind::nic) {
      nic_vertices.push_back(v);
      nic_gbps = std::max(nic_gbps, x.port_bandwidth_gbps);
    }
  }
  if (nic_vertices.empty()) {
    throw InvalidArgument("--nodes " + std::to_string(nodes) + ": " + node.name() +
                          " has no NIC to join its nodes with (state them in the file)");
  }
  const int rails = static_cast<int>(nic_vertices.size());
  const int gpus = node.gpu_count();
  TopologyBuilder b(node.name() + "-x" + std::to_string(nodes));
  b.description(std::to_string(nodes) + " x " + node.description() + "; rail-optimized fat-tree, " +
                std::to_string(rails) + " rails")
      .facts(node.facts());  // arch, memory, the network's class, latency figures, nvls
  const presets::RailFabric fabric = presets::add_rail_fabric(b, nodes, rails, nic_gbps);
  for (int n = 0; n < nodes; ++n) {
    const std::string prefix = "n" + std::to_string(n) + ".";
    std::vector<VertexId> copy;
    for (const Vertex& x : node.vertices()) {
      copy.push_back(b.add_vertex({.kind = x.kind,
                                   .name = prefix + x.name,
                                   .node = n,
                                   .rank = x.rank < 0 ? -1 : n * gpus + x.rank,
                                   .local_index = x.local_index,
                                   .forwards = x.forwards,
                                   .physical_switches = x.physical_switches,
                                   .port_bandwidth_gbps = x.port_bandwidth_gbps}));
    }
    for (const Link& l : node.links()) {
      b.connect(copy[static_cast<std::size_t>(l.a)], copy[static_cast<std::size_t>(l.b)],
                spec_of(l));
    }
    for (int r = 0; r < rails; ++r) {
      b.connect(copy[static_cast<std::size_t>(nic_vertices[static_cast<std::size_t>(r)])],
                fabric.leaf(n, r), fabric.network);
    }
  }
  return b.seal();
}

}  // namespace twinccl::topo
