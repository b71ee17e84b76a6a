// Internal to the presets: one DGX-style node (8 GPUs on an NVSwitch fabric, 4 PCIe switches
// each holding 2 GPUs and 2 NICs, 2 CPU sockets) added to a builder, and the DGX systems and
// clusters built from it (dgx-a100, dgx-h100, dgx-h200, dgx-b200 and their -cluster-N). The node's
// drawing is in dgx_h100.cc, the cluster's in dgx_cluster.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "twinccl/topologies/builder.h"

namespace twinccl::topo::presets {

// How the 8 GPUs are joined: one NVSwitch fabric vertex (NVIDIA), or a full mesh of direct
// GPU-GPU links, one per pair (AMD Infinity Fabric / xGMI; link type nvlink, lanes 1).
enum class GpuFabric { nvswitch, mesh };

struct DgxNodeSpec {
  int node = 0;
  std::string prefix;  // vertex names start with it: "n3." (or "" for one node)
  GpuFabric fabric = GpuFabric::nvswitch;
  int nvlinks_per_gpu = 18;  // NVLinks from one GPU into the NVSwitch fabric (nvswitch only)
  double nvlink_link_bandwidth_gbps = 20.6;  // one link (mesh: one GPU pair's link)
  int physical_nvswitches = 4;               // nvswitch only
  int pcie_gen = 5;
  int nics = 8;
  double nic_bandwidth_gbps = 50.0;     // one NIC port, one direction
  double cpu_interconnect_gbps = 40.0;  // between the two sockets
};

struct DgxNodeIds {
  std::vector<VertexId> gpus;  // by local index
  std::vector<VertexId> nics;  // by local index (rail)
};

DgxNodeIds add_dgx_node(TopologyBuilder& builder, const DgxNodeSpec& spec);

// A DGX model: what one node is, and how its presets are named.
struct DgxSystem {
  std::string name;          // "dgx-h100"
  std::string cluster_name;  // "h100-cluster" (the preset is cluster_name + "-N")
  std::string model;         // "DGX H100", in descriptions
  std::string description;   // one node's description
  std::string nic_label;     // "400G", in the cluster's description
  GpuArch arch = GpuArch::unknown;
  bool nvls = false;
  double memory_gbps = 0.0;  // one GPU's HBM, GB/s (0 = the arch's, device_memory_gbps)
  NetworkClass network = NetworkClass::infiniband;  // between nodes
  DgxNodeSpec node;                                 // node index and prefix are set per node
  double group_launch_us = 0.0;  // the host's, per GPU of a -g N thread (host_launch.h); 0 = 5 us
  HostCpu host_cpu = HostCpu::x86;  // the host's CPUs (x86: Intel, or not stated)
  int nic_ports = 0;  // RDMA devices one NIC card presents (TopologyFacts::nic_ports); 0 = 1
  // NCCL settings the node's network stack exports (the cluster's facts; 0 = not set here: the
  // network class's export, else NCCL's default; network_nccl_env.h):
  // NCCL_BUFFSIZE and NCCL_P2P_NET_CHUNKSIZE, set on the AWS EFA nodes (aws_efa.h).
  double nccl_buffsize_bytes = 0.0;
  double p2p_net_chunk_bytes = 0.0;
};

// The DGX H100 / H200 host (2 x Xeon Platinum 8480C, Sapphire Rapids: NVIDIA's DGX H100/H200
// datasheets) launches a `-g 8` call's 8 GPUs in 25.6 us: Azure ND H100 v5 (the same CPU), NCCL
// 2.18.5, `-g 8`, all_reduce 1 KiB and 2 KiB (busbw 0.07 / 0.14 GB/s -> 25.6 us both;
// Azure/AI-benchmarking-guide ae0b6a7 ND_H100_v5_results.md). Fitted on those two rows only
// (not in tests/fidelity/figures); that run's 4-16 KiB rows are marked fitted on (the same host
// and run), the ND H200 v5 rows (another VM of that CPU) are judged. Set on the DGX H100 / H200
// presets and Azure ND H100 v5; a cloud node built from them keeps its own host's default
// (cloud_node, cloud_clusters.cc). docs/fidelity.md, "-g N host floor".
inline constexpr double kSapphireRapidsGroupLaunchUs = 25.6 / 8.0;

// One node of the model, named system.name.
Topology dgx_system(const DgxSystem& system);
// DGX H100's system (dgx_h100.cc); DGX H200 is the same graph under its own names.
DgxSystem h100_system();
// DGX B200's (dgx_b200.cc) and the 8 x MI300X server's (mi300x.cc): the clouds' nodes start there.
DgxSystem b200_system();
DgxSystem mi300x_system();
// DGX B300's (dgx_b300.cc): DGX B200's graph with 8 x 800G ConnectX-8 on PCIe gen6.
DgxSystem b300_system();
// A cloud's node (cloud_clusters.cc): `base` named as the cloud sells it ("<model>: <parts>"), with
// its NICs' label (empty: the base's), its network's class, and its own host's launch cost (the
// 5 us default unless its preset knows it) and no network plugin settings (its preset sets them).
DgxSystem cloud_node(DgxSystem base, std::string name, std::string model, std::string_view parts,
                     std::string nic_label, NetworkClass network);
// AWS p6-b300.48xlarge's node (aws_p6_b300.cc), as cloud_clusters.cc's aws-p6-b300-N uses it.
DgxSystem aws_p6_b300_system();
// `nodes` nodes (1..1024) of the model on add_rail_fabric()'s fat-tree (one rail per NIC);
// ConfigError naming the preset and the value otherwise.
Topology dgx_cluster(const DgxSystem& system, int nodes);

}  // namespace twinccl::topo::presets
