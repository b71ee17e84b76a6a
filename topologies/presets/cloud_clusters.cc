// The GPU clusters people rent, named as the clouds sell them: aws-p4d-N, aws-p4de-N, aws-p5-N,
// aws-p5e-N, aws-p5en-N, aws-p6-b200-N, aws-p6-b300-N, gcp-a3mega-N, gcp-a3high-N, gcp-a4-N,
// azure-ndv5-N, oci-a100-N, oci-h100-N, mi300x-roce-N, mi325x-roce-N, mi355x-roce-N (N
// nodes, 1..1024).
//
// Each is a DGX-like node (dgx_node.cc: GPUs on one NVSwitch fabric, or MI300X's xGMI mesh; GPU
// i and NIC i under PCIe switch i/2) N times on the rail-optimized fat-tree of dgx_cluster.cc,
// with the cloud's NICs and its network's class (topology.h NetworkClass; what the class costs
// per message: sim/src/network_class.h):
//
//   aws-p5-N     8 H100 --NVSwitch (NVLS)-- 32 x 100G EFA, 4 per GPU --> 8 rails of 400 Gb/s
//                          aws-ofi-nccl's RDMA protocol stripes one NCCL device over a GPU's 4
//                          EFA NICs (its tuner: "4 rails available to each GPU", 12.5 GB/s each)
//   aws-p4d-N    8 A100 --NVSwitch-- 4 x 100G EFA: one NIC per 2 GPUs (PCIe switch i)
//   gcp-a3high-N 8 H100 --NVSwitch-- 4 x 200G GPUDirect-TCPX: one NIC per 2 GPUs, as p4d
//
// Figures and their sources (the vendors' instance pages):
//   AWS p4d.24xlarge: 8 A100 40GB, NVSwitch 600 GB/s, 400 Gbps EFA (4 x 100G), PCIe gen4;
//     p4de.24xlarge the same with A100 80GB -- https://aws.amazon.com/ec2/instance-types/p4/
//   AWS p5.48xlarge: 8 H100 80GB, 3200 Gbps EFAv2 (32 x 100G), NVSwitch 900 GB/s, 3rd Gen AMD
//     EPYC hosts; p5e.48xlarge 8 H200 141GB (4.8 TB/s), same host and network --
//     https://aws.amazon.com/ec2/instance-types/p5/ ; a p5 host's /proc/cpuinfo: "AMD EPYC 7R13
//     Processor" beside "H100 80GB HBM3" on aws (github.com/mlmon/surveyor README's example).
//   AWS p5en.48xlarge: 8 H200, 3200 Gbps EFAv3 (16 x 200G), PCIe gen5 --
//     https://aws.amazon.com/ec2/instance-types/p5/ ; aws-ofi-nccl's tuner: 2 rails per GPU
//     (v1.21.1 src/tuner/nccl_ofi_model.cpp P5en row num_rails 2, 25 GiB/s each): 8 x 400G.
//   AWS p6-b200.48xlarge: 8 B200, 3.2 Tbps EFAv4 (8 x 400G) --
//     https://aws.amazon.com/ec2/instance-types/p6/
//   AWS p6-b300.48xlarge (aws_p6_b300.cc): 8 B300, 16 x 400G EFA (6.4 Tbps) as 8 x 800G, PCIe
//     gen6, aws-ofi-nccl's own "p6-b300" platform (efa-v3); sources in that file.
//   EFA's per-message cost and rails per GPU: AWS's tuner in aws-ofi-nccl
//     (src/tuner/nccl_ofi_model.cpp, include/nccl_ofi_tuner.h; sim/src/network_class.h). Its
//     platform table (v1.21.1 src/platform-aws.cpp platform_data_map) makes three EFA classes:
//     p4d/p4de efa-sendrecv (SENDRECV protocol, 75 us), p5/p5e efa (RDMA, 75 us reported, 20 us
//     measured), p5en/p6-b200 efa-v3 (one "p5en/p6-b200" platform: 35 us reported, 18 measured).
//   Every AWS preset carries the NCCL_BUFFSIZE 8 MiB and NCCL_P2P_NET_CHUNKSIZE 512 KiB that
//     aws-ofi-nccl exports on its EFA platforms since v1.16.0 (aws_efa.h: sources, and why a run
//     of an older plugin says `--set nccl_buffsize_bytes=4194304 p2p_net_chunk_bytes=131072`).
//   GCP a3-megagpu-8g (A3 Mega): 8 H100 80GB, 8 GPU NICs x 200 Gbps (GPUDirect-TCPXO);
//     a3-highgpu-8g (A3 High): 8 H100, 4 GPU NICs x 200 Gbps (GPUDirect-TCPX); a4-highgpu-8g
//     (A4): 8 B200, 8 x 400 Gbps RoCE (CX-7) --
//     https://cloud.google.com/compute/docs/gpus/gpu-network-bandwidth
//   GCP's NCCL environment for TCPXO (GoogleCloudPlatform/container-engine-accelerators
//     gpudirect-tcpxo nccl-env-profile.sh, its best-practice.md): NCCL_NVLS_ENABLE=0,
//     NCCL_ALGO=Ring,Tree, NCCL_PROTO=Simple (Simple,LL128 with nccl-env-profile-ll128.sh); for
//     TCPX (gpudirect-tcpx nccl-config.yaml) NCCL_ALGO=Ring, NCCL_PROTO=Simple: no NVLS on either.
//   GCP's gIB environment for A4 (GoogleCloudPlatform/cluster-toolkit@1047080 examples/
//     machine-learning/a4-highgpu-8g/a4high-vm.yaml:288-299): NCCL_NVLS_CHUNKSIZE=524288 and the
//     gIB plugin over the CX-7 RoCE NICs: network class roce-gib (sim/src/network_class.h).
//   Azure ND H100 v5: 8 H100, 8 x 400 Gb/s NDR InfiniBand, one per GPU --
//     https://learn.microsoft.com/azure/virtual-machines/nd-h100-v5-series
//   OCI BM.GPU.A100-v2.8: 8 A100 80GB, 16 x 100 Gbps RDMA over RoCE v2 (1.6 Tbps) --
//     https://docs.oracle.com/en-us/iaas/Content/Compute/References/computeshapes.htm (as crawled
//     2025-02-13, jacklty/oci_doc_crawler@8e7bbd7 iaas/Content/Compute/References/computeshapes.md:
//     BM.GPU4.8 "8 x 200 Gbps RDMA", BM.GPU.A100-v2.8 "16 x 100 Gbps RDMA")
//   mi300x-roce-N / mi325x-roce-N: 8 MI300X (5.3 TB/s) / MI325X (256 GB HBM3E, 6 TB/s), the same
//     xGMI mesh (mi300x.cc), 8 x 400G RoCE NICs, one per GPU (AMD's Instinct platform reference,
//     e.g. Pensando Pollara 400 or Broadcom Thor2) -- https://www.amd.com/en/products/accelerators/
//     instinct/mi300/mi325x.html ; RCCL runs NCCL's IB transport over RoCE. Hosts: AMD EPYC, as
//     AMD's own 8-GPU systems (MLCommons inference_results_v4.1 closed/AMD/systems/
//     8xMI300X_2xEPYC-9374F.json; v6.0 closed/AMD 87xMI355X_22xEPYC_9575F); a cloud's MI300X on
//     Xeon hosts is a topology file with "host_cpu": "x86" (docs/topologies.md).
//   mi355x-roce-N: 8 MI355X (CDNA 4, gfx950; 288 GB HBM3E, 8 TB/s), the same fully connected
//     mesh of 7 Infinity Fabric links per GPU at 153.6 GB/s each (both ways: 76.8 per direction),
//     8 x 400G RoCE NICs (OCI BM.GPU.MI355x.v0.8: AMD Pensando Pollara 400; v1.8: ConnectX-7) --
//     https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html ,
//     https://github.com/oracle-quickstart/oci-gpu-quickstarts amd/MI355X/README-MI355X.md. Each
//     link is taken at 390 / 7 = 55.7 GB/s (0.73 of 76.8 raw; MI300X: 48 of 64, 0.75): AMD's own
//     single-node MI355X reference, all_reduce busbw 390 GB/s at 8 GiB (ROCm/cvs@e241bd4
//     input/config_file/rccl/single_node_mi355_rccl.json), over the 7 links that RCCL's one-node
//     rings load evenly (rome_model_79; sim/src/topology_view.cc). RCCL's own search counts 48 per
//     gfx95x link (ROCm/rocm-systems projects/rccl/src/graph/topo.h GFX95X_XGMI_WIDTH). RCCL's
//     tuning for gfx950 (its tables postdate the one modelled) is not modelled: NCCL's rows.
// What is not modelled: AWS's tuner's region tables for p5en and p6 (p5/p5e's are:
// sim/src/efa_region_tuner.cc; the others keep NCCL's ranking with the plugin's latency), EFA's SRD
// spraying over paths (the fat-tree stands for it), what sets GCP's TCPX/TCPXO costs (the classes
// carry figures fitted on Google's own published runs: network_class.h, docs/fidelity.md).
#include <functional>
#include <string>
#include <string_view>

#include "aws_efa.h"
#include "dgx_node.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {

// dgx_node.h: also aws_p6_b300.cc's node.
presets::DgxSystem presets::cloud_node(DgxSystem base, std::string name, std::string model,
                                       std::string_view parts, std::string nic_label,
                                       NetworkClass network) {
  base.name = base.cluster_name = std::move(name);
  base.model = std::move(model);
  base.description = base.model + ": " + std::string(parts);
  if (!nic_label.empty()) base.nic_label = std::move(nic_label);
  base.network = network;
  base.group_launch_us = 0.0;    // the cloud's own host: 5 us unless its preset knows it
  base.host_cpu = HostCpu::x86;  // and its own CPUs: Intel or not stated unless its preset says
  base.nic_ports = 0;            // and its own NIC cards: one device a card unless it says
  base.nccl_buffsize_bytes = base.p2p_net_chunk_bytes = 0.0;  // its own network plugin's
  return base;
}

namespace {

using presets::aws_ofi_nccl_env;
using presets::cloud_node;
using presets::DgxSystem;

DgxSystem aws_p4d(bool p4de) {
  DgxSystem s;
  s.name = p4de ? "aws-p4de" : "aws-p4d";
  s.cluster_name = s.name;
  s.model = p4de ? "AWS p4de.24xlarge" : "AWS p4d.24xlarge";
  s.description = s.model + ": 8 A100 " + (p4de ? "80GB" : "40GB") +
                  ", NVSwitch, 12 NVLink3 x 20 GB/s (NCCL), 4 x 100G EFA, PCIe gen4";
  s.nic_label = "100G EFA";
  s.arch = GpuArch::ampere;
  s.nvls = false;
  s.memory_gbps = p4de ? 2039.0 : 1555.0;  // A100 80GB / 40GB data sheet
  s.network = NetworkClass::efa_sendrecv;
  s.node = {.node = 0,
            .prefix = "",
            .fabric = presets::GpuFabric::nvswitch,
            .nvlinks_per_gpu = 12,
            .nvlink_link_bandwidth_gbps = nvlink_link_bandwidth_gbps(GpuArch::ampere),
            .physical_nvswitches = 6,
            .pcie_gen = 4,
            .nics = 4,
            .nic_bandwidth_gbps = 12.5};
  return aws_ofi_nccl_env(s);
}

DgxSystem aws_p5(bool p5e) {
  DgxSystem s = cloud_node(presets::h100_system(), p5e ? "aws-p5e" : "aws-p5",
                           p5e ? "AWS p5e.48xlarge" : "AWS p5.48xlarge",
                           std::string("8 ") + (p5e ? "H200" : "H100") +
                               ", NVSwitch (NVLS), 32 x 100G EFA as 8 rails of 4 (aws-ofi-nccl), "
                               "PCIe gen5",
                           "4 x 100G EFA", NetworkClass::efa);
  s.memory_gbps = p5e ? 4800.0 : 0.0;
  s.host_cpu = HostCpu::x86_amd;  // 3rd Gen AMD EPYC (7R13), p5 and p5e alike (header)
  return aws_ofi_nccl_env(s);     // the node's 8 NICs at 50 GB/s: one rail of 4 EFA NICs per GPU
}

DgxSystem aws_p5en() {
  DgxSystem s = cloud_node(presets::h100_system(), "aws-p5en", "AWS p5en.48xlarge",
                           "8 H200, NVSwitch (NVLS), 16 x 200G EFAv3 as 8 rails of 2 "
                           "(aws-ofi-nccl), PCIe gen5",
                           "2 x 200G EFAv3", NetworkClass::efa_v3);
  s.memory_gbps = 4800.0;
  return aws_ofi_nccl_env(s);  // the node's 8 NICs at 50 GB/s: one rail of 2 EFA NICs per GPU
}

DgxSystem aws_p6_b200() {
  return aws_ofi_nccl_env(cloud_node(presets::b200_system(), "aws-p6-b200", "AWS p6-b200.48xlarge",
                                     "8 B200, NVLink 5 (NVLS), 8 x 400G EFAv4, PCIe gen5",
                                     "400G EFA", NetworkClass::efa_v3));
}

// GCP's TCP-based H100 machines: GCP's own NCCL environment turns NVLS off (header); `nics` GPU
// NICs of 200G at 25 GB/s.
DgxSystem gcp_tcp_h100(std::string name, std::string model, std::string_view parts,
                       std::string nic_label, NetworkClass network, int nics) {
  DgxSystem s = cloud_node(presets::h100_system(), std::move(name), std::move(model), parts,
                           std::move(nic_label), network);
  s.nvls = false;
  s.node.nics = nics;
  s.node.nic_bandwidth_gbps = 25.0;
  return s;
}

DgxSystem gcp_a3mega() {
  return gcp_tcp_h100("gcp-a3mega", "GCP a3-megagpu-8g",
                      "8 H100, NVSwitch (NVLS off: GCP's NCCL profile), 8 x 200G GPUDirect-TCPXO "
                      "NICs, PCIe gen5",
                      "200G TCPXO", NetworkClass::tcpxo, 8);
}

DgxSystem gcp_a3high() {
  return gcp_tcp_h100("gcp-a3high", "GCP a3-highgpu-8g",
                      "8 H100, NVSwitch (NVLS off: GCP's NCCL profile), 4 x 200G GPUDirect-TCPX "
                      "NICs (one per 2 GPUs), PCIe gen5",
                      "200G TCPX", NetworkClass::tcpx, 4);
}

DgxSystem gcp_a4() {
  return cloud_node(presets::b200_system(), "gcp-a4", "GCP a4-highgpu-8g",
                    "8 B200, NVLink 5 (NVLS), 8 x 400G RoCE (CX-7, Google's gIB NCCL plugin), "
                    "PCIe gen5",
                    "400G RoCE", NetworkClass::roce_gib);
}

DgxSystem azure_ndv5() {
  DgxSystem s = cloud_node(presets::h100_system(), "azure-ndv5", "Azure ND H100 v5",
                           "8 H100, NVSwitch (NVLS), 8 x 400G NDR InfiniBand, PCIe gen5", "",
                           NetworkClass::infiniband);
  s.group_launch_us = presets::kSapphireRapidsGroupLaunchUs;  // the same Xeon 8480C as DGX H100
  return s;
}

DgxSystem oci_a100() {
  DgxSystem s = cloud_node(aws_p4d(true), "oci-a100", "OCI BM.GPU.A100-v2.8",
                           "8 A100 80GB, NVSwitch, 16 x 100G RoCE v2, PCIe gen4", "100G RoCE",
                           NetworkClass::roce);
  s.node.nics = 16;
  // The 16 x 100G RDMA devices sit on 8 cards of 2 ports: OCI's shapes page gives BM.GPU4.8 (the
  // A100 40 GB shape of the same cluster network) as "8 x 200 Gbps RDMA" and its scripts list 16
  // mlx5 devices for every A100 shape (oracle-quickstart/oci-hpc-oke docs, NCCL_IB_HCA), so NCCL
  // from 2.20.3 runs 8 devices of 200G (NCCL_IB_MERGE_NICS; topology_view.cc nccl_nets).
  s.nic_ports = 2;
  // Its hosts: AMD EPYC 7J13 (BM.GPU.A100-v2.8) and 7542 (BM.GPU4.8), the same shapes page.
  s.host_cpu = HostCpu::x86_amd;
  return s;
}

// OCI BM.GPU.H100.8 (the shapes page above): 8 H100 80GB, Intel Sapphire Rapids 8480+ (2 x 56
// cores: DGX H100's CPU family, its -g N launch figure), "1 x 100 Gbps, 8 x 2 x 200 Gbps RDMA": 16
// RoCE devices of 200G on 8 dual-port cards, which NCCL from 2.20.3 runs as 8 devices of 400G.
DgxSystem oci_h100() {
  DgxSystem s = cloud_node(presets::h100_system(), "oci-h100", "OCI BM.GPU.H100.8",
                           "8 H100, NVSwitch (NVLS), 16 x 200G RoCE v2 on 8 dual-port cards, "
                           "PCIe gen5",
                           "200G RoCE", NetworkClass::roce);
  s.node.nics = 16;
  s.node.nic_bandwidth_gbps = 25.0;
  s.nic_ports = 2;
  s.group_launch_us = presets::kSapphireRapidsGroupLaunchUs;
  return s;
}

DgxSystem mi3xx_roce(bool mi325x) {
  DgxSystem s = cloud_node(presets::mi300x_system(), mi325x ? "mi325x-roce" : "mi300x-roce",
                           mi325x ? "8 x MI325X server" : "8 x MI300X server",
                           "fully connected xGMI (7 x 48 GB/s, RCCL), 8 x 400G RoCE, gen5",
                           "400G RoCE", NetworkClass::roce);
  s.memory_gbps = mi325x ? 6000.0 : 0.0;
  s.host_cpu = HostCpu::x86_amd;  // AMD's own 8-GPU systems: 2 x EPYC (header)
  return s;
}

DgxSystem mi355x_roce() {
  DgxSystem s = cloud_node(presets::mi300x_system(), "mi355x-roce", "8 x MI355X server",
                           "fully connected xGMI (7 x 55.7 GB/s), 8 x 400G RoCE, gen5", "400G RoCE",
                           NetworkClass::roce);
  s.arch = GpuArch::cdna4;
  s.memory_gbps = 0.0;  // the arch's: 8 TB/s
  s.node.nvlink_link_bandwidth_gbps = nvlink_link_bandwidth_gbps(GpuArch::cdna4);
  s.host_cpu = HostCpu::x86_amd;  // AMD's own 8-GPU systems: 2 x EPYC (header)
  return s;
}

struct CloudPreset {
  std::string_view prefix;  // "aws-p5-" (the preset is prefix + N)
  std::function<DgxSystem()> system;
};

const std::vector<CloudPreset>& cloud_presets() {
  static const std::vector<CloudPreset> presets = {
      {"aws-p4d-", [] { return aws_p4d(false); }},
      {"aws-p4de-", [] { return aws_p4d(true); }},
      {"aws-p5-", [] { return aws_p5(false); }},
      {"aws-p5e-", [] { return aws_p5(true); }},
      {"aws-p5en-", aws_p5en},
      {"aws-p6-b200-", aws_p6_b200},
      {"aws-p6-b300-", presets::aws_p6_b300_system},
      {"gcp-a3mega-", gcp_a3mega},
      {"gcp-a3high-", gcp_a3high},
      {"gcp-a4-", gcp_a4},
      {"azure-ndv5-", azure_ndv5},
      {"oci-a100-", oci_a100},
      {"oci-h100-", oci_h100},
      {"mi300x-roce-", [] { return mi3xx_roce(false); }},
      {"mi325x-roce-", [] { return mi3xx_roce(true); }},
      {"mi355x-roce-", mi355x_roce},
  };
  return presets;
}

}  // namespace

std::optional<Topology> cloud_cluster(std::string_view name) {
  for (const CloudPreset& c : cloud_presets()) {
    if (name.substr(0, c.prefix.size()) != c.prefix) continue;
    const std::string_view count = name.substr(c.prefix.size());
    int nodes = 0;
    for (char ch : count) {
      if (ch < '0' || ch > '9' || nodes > 100000) return std::nullopt;
      nodes = nodes * 10 + (ch - '0');
    }
    if (count.empty()) return std::nullopt;
    return presets::dgx_cluster(c.system(), nodes);
  }
  return std::nullopt;
}

}  // namespace twinccl::topo
