// Internal to the presets: the rail-optimized two-level fat-tree that joins the nodes of every
// cluster preset (h100/h200/b200-cluster-N, mi300x-cluster-N, gb200-nvl72-cluster-R) and of
// rail_cluster() (an imported node repeated N times).
//
//   RailFabric fabric = add_rail_fabric(b, nodes, /*rails*/ 8, /*link_gbps*/ 50.0);
//   ... add node n, then: b.connect(nic_of_rail_r, fabric.leaf(n, r), fabric.network);
//
// One leaf per rail per scalable unit (SU) of 32 nodes, every leaf linked to each of 32 spines,
// every link at the NIC's line rate: 32 down + 32 up ports per leaf, non-blocking, radix 64
// (NVIDIA's QM9700, as in the DGX SuperPOD reference design). Leaves and spines are added before
// any node, so vertex and link ids (and ECMP choices) are those h100-cluster-N always had.
#pragma once

#include <vector>

#include "twinccl/topologies/builder.h"

namespace twinccl::topo::presets {

struct RailFabric {
  static constexpr int nodes_per_unit = 32;
  static constexpr int spines = 32;
  static constexpr int radix = 64;
  int rails = 0;
  LinkSpec network;              // leaf <-> spine and NIC <-> leaf
  std::vector<VertexId> leaves;  // [unit * rails + rail]
  VertexId leaf(int node, int rail) const {
    return leaves[static_cast<std::size_t>((node / nodes_per_unit) * rails + rail)];
  }
};

// Adds the leaves and spines for `nodes` nodes of `rails` NICs each; links at `link_gbps`.
RailFabric add_rail_fabric(TopologyBuilder& builder, int nodes, int rails, double link_gbps);

}  // namespace twinccl::topo::presets
