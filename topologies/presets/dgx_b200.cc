// dgx-b200 and b200-cluster-N (also "b200xN"): NVIDIA DGX B200.
//
//              +------------- NVSwitch fabric (2 NVLink 5 switch chips) --------------+
//              |      one vertex; NVLS (in-switch reduction, Blackwell efficiency)     |
//              +-----------------------------------------------------------------------+
//                 | 18 NVLink5 per GPU = 18 x 40.1 = 721.8 GB/s per direction (NCCL's SM100)
//   gpu0 gpu1    gpu2 gpu3    gpu4 gpu5    gpu6 gpu7        ranks 0..7, B200 SXM
//     \   /        \   /        \   /        \   /          PCIe gen5 x16 = 48 GB/s (NCCL's table)
//     pcie0        pcie1        pcie2        pcie3
//     /   \        /   \        /   \        /   \          2 GPUs + 2 NICs per PCIe switch
//   nic0 nic1    nic2 nic3    nic4 nic5    nic6 nic7        8 x ConnectX-7 400 Gb/s = 50 GB/s
//       \           /             \           /
//         cpu0 ------------------------ cpu1               2 x Intel Xeon Platinum 8570
// The cluster (b200-cluster-N) is dgx_cluster.cc's rail-optimized fat-tree of these nodes.
//
// Figures and their sources:
//   NVLink 5: 18 links per GPU, 1.8 TB/s per GPU (both directions; 900 GB/s each way), 14.4 TB/s
//     for the 8 GPUs -- NVIDIA's DGX B200 page, https://www.nvidia.com/en-us/data-center/dgx-b200/
//     and MLCommons' nebius_b200_n1 system description ("18x 5th Gen NVLink, 14.4 TB/s
//     aggregated bandwidth", "PCIe Gen5 x16", "8x ConnectX-7 IB NDR 400Gb/s"),
//     https://github.com/mlcommons/inference_results_v6.0 closed/Nebius/systems/nebius_b200_n1.json
//   NCCL counts 40.1 GB/s per SM100 link (SM100_NVLINK_BW, graph/topo.h; nccl-facts.md), so
//     721.8 GB/s, as dgx-h100 uses NCCL's 20.6; NVLS efficiency 0.74 on Blackwell (tuning.cc).
//   2 x 5th-generation NVLink switches (14.4 TB/s aggregate), 8 x ConnectX-7 single-port cards
//     (InfiniBand up to 400 Gb/s), 2 x Intel Xeon 8570 (PCIe Gen5) -- DGX B200 User Guide,
//     https://docs.nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html
//   Measured all_reduce busbw: 8 Blackwell GPUs on one NVLink 5 fabric (2 GB200 trays, MNNVL)
//     811 GB/s, https://www.lixueduan.com/posts/ai/13-gb200-mnnvl-nccl-test ; 2 x 8 B200 on
//     400G InfiniBand, 8 GiB: 690 GB/s, https://github.com/coreweave/nccl-tests/pull/92 .
#include "dgx_node.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {
presets::DgxSystem presets::b200_system() {
  return {.name = "dgx-b200",
          .cluster_name = "b200-cluster",
          .model = "DGX B200",
          .description =
              "NVIDIA DGX B200: 8 B200 SXM, 2 NVLink 5 switches (NVLS), 18 NVLink5 x "
              "40.1 GB/s (NCCL), 8 x 400G NICs, PCIe gen5",
          .nic_label = "400G",
          .arch = GpuArch::blackwell,
          .nvls = true,
          .node = {.node = 0,
                   .prefix = "",
                   .fabric = presets::GpuFabric::nvswitch,
                   .nvlinks_per_gpu = 18,
                   .nvlink_link_bandwidth_gbps = nvlink_link_bandwidth_gbps(GpuArch::blackwell),
                   .physical_nvswitches = 2,
                   .pcie_gen = 5,
                   .nics = 8,
                   .nic_bandwidth_gbps = 50.0}};
}

Topology dgx_b200() { return presets::dgx_system(presets::b200_system()); }
Topology b200_cluster(int nodes) { return presets::dgx_cluster(presets::b200_system(), nodes); }

}  // namespace twinccl::topo
