// The rail-optimized two-level fat-tree shared by the cluster presets; see rail_fabric.h.
#include "rail_fabric.h"

#include <string>

#include "twinccl/topologies/presets.h"

namespace twinccl::topo::presets {

RailFabric add_rail_fabric(TopologyBuilder& b, int nodes, int rails, double link_gbps) {
  RailFabric f;
  f.rails = rails;
  f.network = {.type = LinkType::network,
               .bandwidth_gbps = link_gbps,
               .latency_us = PresetLatencies::network_us};
  const int units = (nodes + RailFabric::nodes_per_unit - 1) / RailFabric::nodes_per_unit;
  for (int u = 0; u < units; ++u) {
    for (int r = 0; r < rails; ++r) {
      f.leaves.push_back(
          b.add_vertex({.kind = VertexKind::network_switch,
                        .name = "leaf.su" + std::to_string(u) + ".r" + std::to_string(r),
                        .node = -1,
                        .level = 1,
                        .radix = RailFabric::radix}));
    }
  }
  for (int s = 0; s < RailFabric::spines; ++s) {
    const VertexId spine = b.add_vertex({.kind = VertexKind::network_switch,
                                         .name = "spine" + std::to_string(s),
                                         .node = -1,
                                         .level = 2,
                                         .radix = RailFabric::radix});
    for (VertexId leaf : f.leaves) b.connect(leaf, spine, f.network);
  }
  return f;
}

}  // namespace twinccl::topo::presets
