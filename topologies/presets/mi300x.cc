// mi300x-8 and mi300x-cluster-N: an 8 x AMD Instinct MI300X server (the AMD
// OAM platform as OEMs and clouds ship it), alone or N of them on the rail-optimized fat-tree.
//
//   xGMI (Infinity Fabric): every pair of the 8 GPUs has one direct link -- 28 links, 7 per GPU,
//   48 GB/s each way as RCCL counts it (64 GB/s line rate). No switch, so no NVLS. Drawn as
//   link type nvlink, lanes 1; arch cdna3. A ring hop is one direct link; RCCL runs one ring per
//   link so a GPU's 7 links (336 GB/s) work together.
//
//         gpu0 ---------- gpu1            (every one of the 28 pairs, like 0-1, 0-5, 2-7, ...)
//          |  \        /  |
//          |    \    /    |     ... gpu2 .. gpu7 likewise: K8, the complete graph on 8 GPUs
//          |    /  \      |
//         gpu4 ---------- gpu5
//
//     gpu0 gpu1    gpu2 gpu3    gpu4 gpu5    gpu6 gpu7
//       \   /        \   /        \   /        \   /      PCIe gen5 x16 = 48 GB/s (NCCL's table)
//       pcie0        pcie1        pcie2        pcie3
//       /   \        /   \        /   \        /   \      2 GPUs + 2 NICs per PCIe switch
//     nic0 nic1    nic2 nic3    nic4 nic5    nic6 nic7    8 x 400 Gb/s = 50 GB/s, one per GPU
//         \           /             \           /
//           cpu0 ------------------------ cpu1           2 x AMD EPYC
//
// Figures and their sources:
//   xGMI: 7 links per GPU to its 7 peers, fully connected, 64 GB/s per link per direction raw,
//     ~48 GB/s usable after CRC and protocol overhead (AMD, "Understanding RCCL Bandwidth and
//     xGMI Performance on AMD Instinct MI300X",
//     https://rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi/README.html);
//     RCCL's topology counts 48 GB/s per gfx94x xGMI link
//     (https://github.com/ROCm/rccl/issues/1210) and the preset uses RCCL's figure, as the NVIDIA
//     presets use NCCL's: 7 x 48 = 336 GB/s per GPU each way (AMD's 896 GB/s aggregate peer
//     bandwidth is 7 x 128 GB/s both ways, raw).
//   PCIe Gen5 x16 host link, 192 GB HBM3, 2 EPYC sockets: MLCommons' 8xMI300X_2xEPYC-9374F system
//     description, https://github.com/mlcommons/inference_results_v4.1
//     closed/AMD/systems/8xMI300X_2xEPYC-9374F.json
//   NICs: 8 x 400 Gb/s NDR InfiniBand with GPUDirect RDMA, as Azure's ND MI300X v5
//     (https://github.com/MicrosoftDocs/azure-docs articles/virtual-machines/sizes/
//     gpu-accelerated/nd-mi300x-v5-series.md).
//   Measured all_reduce busbw, 8 GPUs, RCCL 2.22.3 (rccl-tests, one process per GPU): 64 MiB
//     273.66, 1 GiB 314.72, 16 GiB 318.98 GB/s; AMD: "the slowest link defines the total" (7 x
//     45.2 GB/s measured) -- the same AMD blog as above.
// What is modelled (RCCL differs from NCCL): no NVLS (no NVSwitch: summary and check say so);
//   ring and tree priced with NCCL's Hopper constants [assumed] over the 336 GB/s the GPU's 7
//   links give together (RCCL runs one ring per link direction); RCCL's own tuning tables and its
//   MSCCL/MSCCL++ paths are not modelled (sim/src/nccl_tuning_table.h).
#include "dgx_node.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {
presets::DgxSystem presets::mi300x_system() {
  return {.name = "mi300x-8",
          .cluster_name = "mi300x-cluster",
          .model = "8 x MI300X server",
          .description =
              "8 AMD Instinct MI300X, fully connected xGMI (7 links x 48 GB/s, RCCL), "
              "no switch, no NVLS, 8 x 400G NICs, PCIe gen5",
          .nic_label = "400G",
          .arch = GpuArch::cdna3,
          .nvls = false,
          .node = {.node = 0,
                   .prefix = "",
                   .fabric = presets::GpuFabric::mesh,
                   .nvlinks_per_gpu = 0,
                   .nvlink_link_bandwidth_gbps = nvlink_link_bandwidth_gbps(GpuArch::cdna3),
                   .physical_nvswitches = 0,
                   .pcie_gen = 5,
                   .nics = 8,
                   .nic_bandwidth_gbps = 50.0},
          .host_cpu = HostCpu::x86_amd};  // the 2 EPYC sockets above (MLCommons' system)
}

Topology mi300x_8() { return presets::dgx_system(presets::mi300x_system()); }
Topology mi300x_cluster(int nodes) { return presets::dgx_cluster(presets::mi300x_system(), nodes); }

}  // namespace twinccl::topo
