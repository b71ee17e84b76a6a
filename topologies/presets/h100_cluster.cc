// h100-cluster-N (also "h100xN"): N DGX H100 nodes on a rail-optimized two-level fat-tree.
//
//     spine0   spine1   ...   spine31          level 2: every leaf links to every spine
//       |  \  /   |  \         /  |            (one 50 GB/s link each: 32 up = 32 down,
//       non-blocking)
//   +---------+---------+-   -+---------+
//   | leaf    | leaf    |     | leaf    |      level 1: one leaf per rail per scalable unit (SU)
//   | su0.r0  | su0.r1  | ... | su0.r7  |      of 32 nodes: leaf su{s}.r{i} serves NIC i of
//   +---------+---------+-   -+---------+      nodes 32s .. 32s+31
//     |  |  |    |  |             |  |
//   n0.nic0 .. n0.nic1 ...  n0.nic7 n1.nic7    NIC i <-> leaf of rail i: 400 Gb/s = 50 GB/s
//     |          |            |
//   n0.gpu0    n0.gpu1  ...  n0.gpu7           GPU i shares PCIe switch i/2 with NIC i
//   (dgx_h100.cc)
//
// Routing (routing_rule()): GPU i -> NIC i -> leaf of rail i; same SU and rail: leaf -> NIC;
// otherwise leaf -> spine (destination node mod 32: ECMP by destination, repeatable) -> leaf.
// Radix 64 is NVIDIA's QM9700 (NDR 400G, 64 ports), as in the DGX SuperPOD reference design.
// Above 64 leaves a physical SuperPOD needs a third level; here a spine vertex stands for a group
// of spine switches with the same total bandwidth, which keeps the fat-tree's full bisection.
// Latency: 1 us per network link (PresetLatencies::network_us), so a leaf hop costs ~2 us.
#include <string>
#include <vector>

#include "dgx_node.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {

Topology h100_cluster(int nodes) {
  constexpr int kMaxNodes = 1024;
  constexpr int kNodesPerUnit = 32;
  constexpr int kRails = 8;
  constexpr int kSpines = 32;
  constexpr int kRadix = 64;
  constexpr double kNicGbps = 50.0;  // 400 Gb/s
  if (nodes < 1 || nodes > kMaxNodes) {
    throw ConfigError("preset h100-cluster-N: N must be in 1.." + std::to_string(kMaxNodes) +
                      ", got " + std::to_string(nodes));
  }
  TopologyBuilder b("h100-cluster-" + std::to_string(nodes));
  b.description(std::to_string(nodes) + " x DGX H100 (" + std::to_string(nodes * kRails) +
                " GPUs) on a rail-optimized two-level fat-tree, 8 x 400G NICs per node")
      .arch(GpuArch::hopper)
      .pcie_gen(5)
      .nvls(true);
  const LinkSpec network{.type = LinkType::network,
                         .bandwidth_gbps = kNicGbps,
                         .latency_us = PresetLatencies::network_us};
  const int units = (nodes + kNodesPerUnit - 1) / kNodesPerUnit;
  std::vector<VertexId> leaves;  // [unit * kRails + rail]
  for (int u = 0; u < units; ++u) {
    for (int r = 0; r < kRails; ++r) {
      leaves.push_back(
          b.add_vertex({.kind = VertexKind::network_switch,
                        .name = "leaf.su" + std::to_string(u) + ".r" + std::to_string(r),
                        .node = -1,
                        .level = 1,
                        .radix = kRadix}));
    }
  }
  for (int s = 0; s < kSpines; ++s) {
    const VertexId spine = b.add_vertex({.kind = VertexKind::network_switch,
                                         .name = "spine" + std::to_string(s),
                                         .node = -1,
                                         .level = 2,
                                         .radix = kRadix});
    for (VertexId leaf : leaves) b.connect(leaf, spine, network);
  }
  for (int n = 0; n < nodes; ++n) {
    const presets::DgxNodeIds ids = presets::add_dgx_node(
        b, {.node = n,
            .prefix = "n" + std::to_string(n) + ".",
            .nvlinks_per_gpu = 18,
            .nvlink_link_bandwidth_gbps = nvlink_link_bandwidth_gbps(GpuArch::hopper),
            .physical_nvswitches = 4,
            .pcie_gen = 5,
            .nics = kRails,
            .nic_bandwidth_gbps = kNicGbps});
    for (int r = 0; r < kRails; ++r) {
      b.connect(ids.nics[static_cast<std::size_t>(r)],
                leaves[static_cast<std::size_t>((n / kNodesPerUnit) * kRails + r)], network);
    }
  }
  return b.seal();
}

}  // namespace twinccl::topo
