// <model>-cluster-N (h100-cluster-N, h200-cluster-N, b200-cluster-N): N DGX nodes on a
// rail-optimized two-level fat-tree (rail_fabric.h). Shown for DGX H100; H200 and B200 differ
// only inside the node (dgx_h200.cc, dgx_b200.cc).
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

#include "dgx_node.h"
#include "rail_fabric.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo::presets {

Topology dgx_system(const DgxSystem& system) {
  TopologyBuilder b(system.name);
  b.description(system.description).arch(system.arch).pcie_gen(system.node.pcie_gen);
  b.nvls(system.nvls).memory_gbps(system.memory_gbps).network(system.network);
  b.group_launch_us(system.group_launch_us).host_cpu(system.host_cpu).nic_ports(system.nic_ports);
  b.nccl_buffsize_bytes(system.nccl_buffsize_bytes).p2p_net_chunk_bytes(system.p2p_net_chunk_bytes);
  DgxNodeSpec spec = system.node;
  spec.node = 0;
  spec.prefix = "";
  add_dgx_node(b, spec);
  return b.seal();
}

Topology dgx_cluster(const DgxSystem& system, int nodes) {
  constexpr int kMaxNodes = 1024;
  if (nodes < 1 || nodes > kMaxNodes) {
    throw ConfigError("preset " + system.cluster_name + "-N: N must be in 1.." +
                      std::to_string(kMaxNodes) + ", got " + std::to_string(nodes));
  }
  const int rails = system.node.nics;
  TopologyBuilder b(system.cluster_name + "-" + std::to_string(nodes));
  b.description(std::to_string(nodes) + " x " + system.model + " (" + std::to_string(nodes * 8) +
                " GPUs) on a rail-optimized two-level fat-tree, " + std::to_string(rails) + " x " +
                system.nic_label + " NICs per node")
      .arch(system.arch)
      .pcie_gen(system.node.pcie_gen)
      .nvls(system.nvls)
      .memory_gbps(system.memory_gbps)
      .network(system.network)
      .group_launch_us(system.group_launch_us)
      .host_cpu(system.host_cpu)
      .nic_ports(system.nic_ports)
      .nccl_buffsize_bytes(system.nccl_buffsize_bytes)
      .p2p_net_chunk_bytes(system.p2p_net_chunk_bytes);
  const RailFabric fabric = add_rail_fabric(b, nodes, rails, system.node.nic_bandwidth_gbps);
  for (int n = 0; n < nodes; ++n) {
    DgxNodeSpec spec = system.node;
    spec.node = n;
    spec.prefix = "n" + std::to_string(n) + ".";
    const DgxNodeIds ids = add_dgx_node(b, spec);
    for (int r = 0; r < rails; ++r) {
      b.connect(ids.nics[static_cast<std::size_t>(r)], fabric.leaf(n, r), fabric.network);
    }
  }
  return b.seal();
}

}  // namespace twinccl::topo::presets
