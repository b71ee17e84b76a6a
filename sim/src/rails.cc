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
// no rotation at all.
#include <algorithm>
#include <map>

#include "flow_build.h"

namespace twinccl::sim::detail {

ChannelRanks rail_ranks(const topo::Topology& topology, int nranks) {
  ChannelRanks out;
  if (topology.summary().nics_per_node <= 0) return out;
  std::map<int, std::vector<int>> by_node;  // node -> ranks, by local GPU index
  for (int r = 0; r < nranks; ++r) by_node[topology.vertex(topology.gpu(r)).node].push_back(r);
  if (by_node.size() < 2) return out;
  const std::size_t g = by_node.begin()->second.size();
  for (auto& [node, ranks] : by_node) {
    if (ranks.size() != g) return out;
    std::sort(ranks.begin(), ranks.end(), [&](int a, int b) {
      return topology.vertex(topology.gpu(a)).local_index <
             topology.vertex(topology.gpu(b)).local_index;
    });
  }
  out.perms.assign(g, std::vector<int>(static_cast<std::size_t>(nranks), 0));
  for (const auto& [node, ranks] : by_node) {
    // Schedule ranks of this node in rank order; the GPUs (ranks) in local order.
    std::vector<int> schedule_ranks = ranks;
    std::sort(schedule_ranks.begin(), schedule_ranks.end());
    for (std::size_t rot = 0; rot < g; ++rot) {
      for (std::size_t j = 0; j < g; ++j) {
        out.perms[rot][static_cast<std::size_t>(schedule_ranks[j])] = ranks[(j + rot) % g];
      }
    }
  }
  return out;
}

}  // namespace twinccl::sim::detail
