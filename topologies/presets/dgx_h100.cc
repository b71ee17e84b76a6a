// dgx-h100: one NVIDIA DGX H100.
//
//              +------------------ NVSwitch fabric (4 NVSwitch gen3 chips) ------------------+
//              |     one vertex, as NCCL merges NVSwitches into one NVS node (graph/topo)    |
//              +-----------------------------------------------------------------------------+
//                 | 18 NVLink4 per GPU = 18 x 20.6 = 370.8 GB/s per direction
//   gpu0 gpu1    gpu2 gpu3    gpu4 gpu5    gpu6 gpu7        ranks 0..7
//     \   /        \   /        \   /        \   /          PCIe gen5 x16 = 48 GB/s (NCCL's table)
//     pcie0        pcie1        pcie2        pcie3
//     /   \        /   \        /   \        /   \          2 GPUs + 2 NICs per PCIe switch
//   nic0 nic1    nic2 nic3    nic4 nic5    nic6 nic7        8 x ConnectX-7 400 Gb/s = 50 GB/s
//       \           /             \           /
//         cpu0 ------------------------ cpu1               2 sockets
//
// NVLink: NCCL counts 20.6 GB/s per NVLink4 (SM90) and an H100 has 18 links to the fabric, so
// 370.8 GB/s; the line rate NVIDIA quotes is 450 GB/s per direction (25 GB/s x 18). We use
// NCCL's figure because the analytic model reproduces NCCL's own tuning (nccl-facts.md).
// NVLS (NVLink SHARP in-switch reduction) is available: Hopper GPUs on NVSwitch gen3.
#include "dgx_node.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {

presets::DgxSystem presets::h100_system() {
  return {.name = "dgx-h100",
          .cluster_name = "h100-cluster",
          .model = "DGX H100",
          .description =
              "NVIDIA DGX H100: 8 H100 SXM, NVSwitch gen3 (NVLS), 18 NVLink4 x 20.6 GB/s, "
              "8 x 400G NICs, PCIe gen5",
          .nic_label = "400G",
          .arch = GpuArch::hopper,
          .nvls = true,
          .node = {.node = 0,
                   .prefix = "",
                   .fabric = presets::GpuFabric::nvswitch,
                   .nvlinks_per_gpu = 18,
                   .nvlink_link_bandwidth_gbps = nvlink_link_bandwidth_gbps(GpuArch::hopper),
                   .physical_nvswitches = 4,
                   .pcie_gen = 5,
                   .nics = 8,
                   .nic_bandwidth_gbps = 50.0},
          .group_launch_us = presets::kSapphireRapidsGroupLaunchUs};  // 2 x Xeon 8480C
}

Topology dgx_h100() { return presets::dgx_system(presets::h100_system()); }
// h100-cluster-N: drawn in dgx_cluster.cc.
Topology h100_cluster(int nodes) { return presets::dgx_cluster(presets::h100_system(), nodes); }

}  // namespace twinccl::topo
