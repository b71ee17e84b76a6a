// dgx-a100: one NVIDIA DGX A100.
//
//              +------------------ NVSwitch fabric (6 NVSwitch gen2 chips) ------------------+
//              |               one vertex, as NCCL merges NVSwitches into one                 |
//              +-----------------------------------------------------------------------------+
//                 | 12 NVLink3 per GPU (2 to each NVSwitch) x 20 GB/s = 240 GB/s (NCCL's SM80
//                 figure)
//   gpu0 gpu1    gpu2 gpu3    gpu4 gpu5    gpu6 gpu7        ranks 0..7
//     \   /        \   /        \   /        \   /          PCIe gen4 x16 = 24 GB/s (NCCL's table)
//     pcie0        pcie1        pcie2        pcie3
//     /   \        /   \        /   \        /   \          2 GPUs + 2 NICs per PCIe switch
//   nic0 nic1    nic2 nic3    nic4 nic5    nic6 nic7        8 x ConnectX-6 200 Gb/s = 25 GB/s
//       \           /             \           /
//         cpu0 ------------------------ cpu1               2 x AMD EPYC 7742
//
// NVLink: 25 GB/s per NVLink3 is the line rate (300 GB/s per GPU per direction, NVIDIA's
// figure); NCCL counts 20 GB/s per SM80 link (SM80_NVLINK_BW in NCCL's graph/topo.h: 240 GB/s),
// and published 8xA100 nccl-tests all_reduce busbw peaks at 228-233 GB/s (docs/fidelity.md), so
// the preset uses NCCL's 20, as dgx-h100 uses NCCL's 20.6 and the NCCL XML import does.
// No NVLS: NVLink SHARP needs Hopper and NVSwitch gen3.
#include "dgx_node.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {

Topology dgx_a100() {
  TopologyBuilder b("dgx-a100");
  b.description(
       "NVIDIA DGX A100: 8 A100 SXM, 6 NVSwitches, 12 NVLink3 x 20 GB/s (NCCL), "
       "8 x 200G NICs, PCIe gen4")
      .arch(GpuArch::ampere)
      .pcie_gen(4)
      .nvls(false)
      .host_cpu(HostCpu::x86_amd);  // 2 x AMD EPYC 7742 (the drawing above)
  presets::add_dgx_node(b,
                        {.node = 0,
                         .prefix = "",
                         .nvlinks_per_gpu = 12,
                         .nvlink_link_bandwidth_gbps = nvlink_link_bandwidth_gbps(GpuArch::ampere),
                         .physical_nvswitches = 6,
                         .pcie_gen = 4,
                         .nics = 8,
                         .nic_bandwidth_gbps = 25.0});
  return b.seal();
}

}  // namespace twinccl::topo
