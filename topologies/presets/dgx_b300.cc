// dgx-b300 and b300-cluster-N (also "b300xN"): NVIDIA DGX B300, 8 Blackwell Ultra GPUs with one
// ConnectX-8 800G NIC each: the InfiniBand XDR (or Spectrum-X Ethernet) node.
//
//              +------------- NVSwitch fabric (NVLink 5, as dgx-b200) ----------------+
//              |      one vertex; NVLS (in-switch reduction, Blackwell efficiency)     |
//              +-----------------------------------------------------------------------+
//                 | 18 NVLink5 per GPU = 18 x 40.1 = 721.8 GB/s per direction (NCCL's SM100)
//   gpu0 gpu1    gpu2 gpu3    gpu4 gpu5    gpu6 gpu7        ranks 0..7, B300 SXM
//     \   /        \   /        \   /        \   /          PCIe gen6 x16 = 96 GB/s (NCCL's table)
//     pcie0        pcie1        pcie2        pcie3          (ConnectX-8's own gen6 switch, on the
//     /   \        /   \        /   \        /   \           GPU board beside its GPU)
//   nic0 nic1    nic2 nic3    nic4 nic5    nic6 nic7        8 x ConnectX-8 800 Gb/s = 100 GB/s
//       \           /             \           /
//         cpu0 ------------------------ cpu1               2 x Intel Xeon 6776P
// The cluster (b300-cluster-N) is dgx_cluster.cc's rail-optimized fat-tree of these nodes, as
// b200-cluster-N's, at 800G a rail.
//
// Figures and their sources (NVIDIA's own pages, https://www.nvidia.com/en-us/data-center/dgx-b300/
// and the DGX B300 User Guide, https://docs.nvidia.com/dgx/dgxb300-user-guide/ , were not
// reachable from here; the figures as the public pages below quote them):
//   8 B300 SXM (Blackwell Ultra), 2 x Intel Xeon 6776P, 10U; NVLink 5th generation: aiwiki's DGX
//     B300 page, https://aiwiki.ai/wiki/nvidia_dgx_b300 ; "InfiniBand XDR or Spectrum-X 2.0 based
//     compute fabric", https://dev.to/aicplight/b300-architecture-and-infiniband-xdr-networking-
//     explained-5645 .
//   8 ConnectX-8 on the GPU tray (not the host board, unlike DGX B200's ConnectX-7), cabled to 8
//     x 800G ports at the front: https://vengineer.hatenablog.com/entry/2025/12/06/080000 (reading
//     the DGX B300 User Guide's figures). ConnectX-8: 800 Gb/s, PCIe gen6 with a built-in gen6
//     switch (gb200_nvl72.cc's GB300 block); one NIC per GPU, so 100 GB/s a GPU.
//   NVLink 5: 18 links per GPU at NCCL's 40.1 GB/s (SM100_NVLINK_BW), as dgx-b200; the switch
//     chips are drawn as dgx-b200's 2 (their count is not in the pages read; drawing only).
//   NCCL reads an XDR port at 800 Gb/s from v2.27.5 (src/transport/net_ib.cc ibvSpeeds gains
//     "200000 /* XDR */" per lane); before, the speed bit is past the table and it reads NDR's
//     100000 per lane: 400 Gb/s, half the port. Not modelled: the preset prices every version at
//     800G (docs/topologies.md, "DGX B300").
// Not set: the B300's HBM rate (the arch's default, as gb300-nvl72 and aws-p6-b300: it only
//   times a one-rank copy) and the host's group launch (5 us default: no -g N figure of this host).
// No published nccl-tests figure of a DGX B300 node or XDR cluster was found to hold it to.
#include "dgx_node.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {

presets::DgxSystem presets::b300_system() {
  DgxSystem s = b200_system();
  s.name = "dgx-b300";
  s.cluster_name = "b300-cluster";
  s.model = "DGX B300";
  s.description =
      "NVIDIA DGX B300: 8 B300 SXM (Blackwell Ultra), NVLink 5 switch fabric (NVLS), 18 NVLink5 x "
      "40.1 GB/s (NCCL), 8 x 800G ConnectX-8 (InfiniBand XDR), PCIe gen6";
  s.nic_label = "800G XDR";
  s.node.pcie_gen = 6;
  s.node.nic_bandwidth_gbps = 100.0;  // ConnectX-8, 800 Gb/s
  return s;
}

Topology dgx_b300() { return presets::dgx_system(presets::b300_system()); }
Topology b300_cluster(int nodes) { return presets::dgx_cluster(presets::b300_system(), nodes); }

}  // namespace twinccl::topo
