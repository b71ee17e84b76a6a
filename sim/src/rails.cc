// rail_ranks: which GPU plays each schedule rank on each channel, so that a multi-node ring or tree
// spreads its channels over the nodes' NICs as NCCL does.
//
// How it works. NCCL builds one ring (and tree) per channel and sends channel c's inter-node
// traffic through NIC c mod nics, so every rail carries its share. Our schedules use the same
// neighbours on every channel (rank r -> r+1), which would push every channel through one NIC per
// node boundary. So on channel c, the ranks of every node are rotated by c: schedule rank
// node_base + j plays the node's GPU (j + c) mod g. A ring (ranks node by node) then enters node k
// at GPU c mod g and leaves it from GPU (c - 1) mod g; a tree's node leader (local rank 0) is GPU
// c mod g, on rail c. 2 nodes of 4 GPUs, ring channel 1:
//     node 0: 1 -> 2 -> 3 -> 0 ==NIC0/NIC1==> node 1: 5 -> 6 -> 7 -> 4 ==NIC0/NIC1==> back to 1
// Channels c and c + g take the same GPUs: there are g rotations. Inside a node the rotation
// changes nothing of a switch's traffic; with a single node (or unequal nodes, or no NICs) there is
// no rotation at all. A sub-communicator's ranks rotate over its own GPUs the same way. A node
// whose GPUs are all linked to each other (MI300X's xGMI mesh, no switch) is crossed on channel c
// from GPU c to GPU c + g/2 over links no other channel uses (node_path_offsets, ring_orders.cc).
#include <algorithm>
#include <map>

#include "flow_build.h"

namespace twinccl::sim::detail {

ChannelRanks rail_ranks(const topo::Topology& topology, std::span<const int> gpus) {
  ChannelRanks out;
  if (topology.summary().nics_per_node <= 0) return out;
  const auto vertex_of = [&](int rank) {
    return topology.vertex(topology.gpu(gpus[static_cast<std::size_t>(rank)]));
  };
  std::map<int, std::vector<int>> by_node;  // node -> call ranks, in rank order
  for (int r = 0; r < static_cast<int>(gpus.size()); ++r) by_node[vertex_of(r).node].push_back(r);
  if (by_node.size() < 2) return out;
  const std::size_t g = by_node.begin()->second.size();
  for (const auto& [node, ranks] : by_node) {
    if (ranks.size() != g) return out;
  }
  out.perms.assign(g, std::vector<int>(gpus.size(), 0));
  for (const auto& [node, schedule_ranks] : by_node) {
    // The node's call ranks in rank order play its GPUs in local order, rotated.
    std::vector<int> by_local = schedule_ranks;
    std::sort(by_local.begin(), by_local.end(),
              [&](int a, int b) { return vertex_of(a).local_index < vertex_of(b).local_index; });
    std::vector<topo::VertexId> node_gpus;
    for (int r : by_local) node_gpus.push_back(topology.gpu(gpus[static_cast<std::size_t>(r)]));
    const std::vector<int> offsets = node_path_offsets(topology, node_gpus);
    if (offsets.size() > 1 && offsets[1] != 1) out.direct_links = true;  // not a rotation
    for (std::size_t rot = 0; rot < g; ++rot) {
      for (std::size_t j = 0; j < g; ++j) {
        const auto local = (static_cast<std::size_t>(offsets[j]) + rot) % g;
        out.perms[rot][static_cast<std::size_t>(schedule_ranks[j])] =
            gpus[static_cast<std::size_t>(by_local[local])];
      }
    }
  }
  return out;
}

}  // namespace twinccl::sim::detail
