// dgx-h200 and h200-cluster-N (also "h200xN"): NVIDIA DGX H200, the DGX H100 with H200 GPUs.
//
//   the node is drawn in dgx_h100.cc, the cluster in dgx_cluster.cc: the same graph
//   8 H200 SXM -- 18 NVLink4 each -- one NVSwitch gen3 fabric (4 chips, NVLS)
//   GPU i and NIC i under PCIe gen5 switch i/2; 8 x ConnectX-7 400 Gb/s (50 GB/s) NICs
//
// Figures and their sources:
//   H200: 141 GB HBM3e at 4.8 TB/s, NVLink 900 GB/s (both directions; 450 each way) -- NVIDIA's
//   H200
//     page, https://www.nvidia.com/en-us/data-center/h200/ ; "18x 4th Gen NVLink, 900GB/s",
//     "PCIe Gen5 x16" in MLCommons' H200-SXM-141GBx8 system description,
//     https://github.com/mlcommons/inference_results_v4.1 closed/NVIDIA/systems/
//     H200-SXM-141GBx8_TRT_MaxQ.json. Memory enters only a one-rank call (a local copy at
//     4.8 TB/s, memory_gbps), so the graph is dgx-h100's: NCCL counts 20.6 GB/s per SM90 link (18
//     x 20.6 = 370.8 GB/s).
//   NICs: 8 x ConnectX-7 400 Gb/s, as DGX H100
//   (https://www.nvidia.com/en-us/data-center/dgx-h200/). Measured: 248 x 8 H200 nodes, all_reduce
//   512 MiB busbw ~350 GB/s, sometimes below 300
//     (https://github.com/NVIDIA/nccl-tests/issues/283); one 8 x H100/H200 node ~480 GB/s
//     (https://github.com/NVIDIA/nccl-tests/issues/309, H100).
#include "dgx_node.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {
namespace {

// dgx-h100's graph under DGX H200's names, with H200's 4.8 TB/s HBM3e (a one-rank call's copy).
presets::DgxSystem h200_system() {
  presets::DgxSystem system = presets::h100_system();
  system.name = "dgx-h200";
  system.cluster_name = "h200-cluster";
  system.model = "DGX H200";
  system.memory_gbps = 4800.0;
  system.description =
      "NVIDIA DGX H200: 8 H200 SXM (141 GB HBM3e), NVSwitch gen3 (NVLS), 18 NVLink4 x 20.6 GB/s, "
      "8 x 400G NICs, PCIe gen5";
  return system;
}

}  // namespace

Topology dgx_h200() { return presets::dgx_system(h200_system()); }
Topology h200_cluster(int nodes) { return presets::dgx_cluster(h200_system(), nodes); }

}  // namespace twinccl::topo
