// gb200-nvl72 and gb200-nvl72-cluster-R: NVIDIA GB200 NVL72 racks, 72 B200 GPUs
// in one NVLink domain each; R racks on the rail-optimized fat-tree (rail_fabric.h).
// gb300-nvl72, gb300-nvl72-cluster-R[xG]: the GB300 NVL72 (Blackwell Ultra), the same rack with
// one ConnectX-8 800G NIC per GPU on a PCIe gen6 x16 path (figures at the end of this block).
//
//   +------------- NVLink Switch fabric: 9 switch trays x 2 NVLink 5 switch chips --------------+
//   |   one vertex "nvswitch" (18 chips): every GPU has one NVLink 5 link to each chip; NVLS     |
//   +-------------------------------------------------------------------------------------------+
//      | 18 NVLink5 per GPU = 18 x 40.1 = 721.8 GB/s per direction (NCCL's SM100 figure)
//   tray t (t = 0..17), 4 GPUs and 2 Grace CPUs:          ranks 72 r + 4 t + i on rack r
//     t{t}.gpu{i}  -- t{t}.pcie{i} -- t{t}.nic{i}          GPU i and its ConnectX-7 400 Gb/s NIC
//                          |                               (50 GB/s) on one PCIe gen5 x16 path
//                    t{t}.cpu{i/2}                         (48 GB/s, NCCL's table), under Grace i/2
//
// One rack is one node here: NCCL treats the GPUs of one NVLink domain (multi-node NVLink,
// MNNVL) as one NVLink clique, so "nodes" below are racks and the tuner sees 72 ranks per node.
// Not drawn: NVLink-C2C between Grace and its GPUs (CPU memory traffic is not modelled) and the
// trays' management/storage NICs (BlueField-3).
// Cluster: rail = NIC index in the rack (72 rails); leaf su{s}.r{k} joins NIC k of racks
// 32 s .. 32 s + 31, every leaf links to 32 spines (non-blocking, as h100-cluster-N). NVIDIA's
// GB200 SuperPOD groups 8 racks per scalable unit with its own leaf layout; this keeps its totals
// (one 400G port per GPU, full bisection), not its cabling.
//
// Figures and their sources:
//   72 Blackwell GPUs and 36 Grace CPUs per rack, one 72-GPU NVLink domain, 130 TB/s of NVLink
//     (72 x 1.8 TB/s) -- NVIDIA's GB200 NVL72 page,
//     https://www.nvidia.com/en-us/data-center/gb200-nvl72/
//   NVLink 5: 18 links per GPU, 1.8 TB/s per GPU both ways -- same page; 9 NVLink switch trays per
//     rack -- NVIDIA Mission Control, https://docs.nvidia.com/base-command-manager/product-manuals/
//     nvidia-mission-control/nvlink ; 2 switch chips per tray (18 in all, one link from every GPU
//     to each) is NVIDIA's product description, not found in the stored sources: it only sets
//     physical_switches (drawn), never a bandwidth.
//   NCCL: 40.1 GB/s per SM100 link (graph/topo.h), NVLS efficiency 0.74 on Blackwell (tuning.cc).
//   Compute tray: 4 GPUs with four ConnectX-7 NDR 400G NICs -- NVIDIA DGX GB200 SuperPOD reference
//     architecture, https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-
//     infrastructure-gb200/latest/dgx-superpod-components.html#dgx-gb200-compute-tray (as cited by
//     https://github.com/ai-dynamo/aisimulate/pull/192), and MLCommons' Crusoe GB200-NVL72 system
//     description ("for each 4-GPU node: 4x ... ConnectX-7"), inference_results_v6.1.
//   Measured all_reduce busbw on one full rack (72 GPUs, NCCL 2.25.1, NVLS on): 1 GiB 681 GB/s
//     (in place 724), 4-8 GiB 835-847 GB/s -- https://github.com/coreweave/nccl-tests/pull/43 ;
//     20 racks (1440 GPUs, NCCL 2.26.2 with NCCL_NVLS_ENABLE=0 in its script), 4 GiB: 346 GB/s --
//     https://github.com/coreweave/nccl-tests/pull/48 (docs/topologies.md: the single-rack
//     plateau, NCCL's NVLS price of 32 heads x 20 GB/s since issue 24, is +6..+7%; the 20-rack run
//     is predicted with --set nvls=0). More held-out rack figures (OCI GB200/GB300 trays and
//     racks, Azure ND GB200 v6, NVIDIA/nccl#1801): tests/fidelity/figures/nvl72.csv.
// GB300 NVL72, where it differs (the NVLink domain, 18 trays of 4 GPUs + 2 Grace, 9 NVSwitch
// trays, 130 TB/s, are GB200's):
//   4 ConnectX-8 per compute tray (2 mezzanine boards x 2 chips), 9 NVSwitch trays, 130 TB/s --
//     NVIDIA Enterprise RA, GB300 NVL72 components, https://docs.nvidia.com/enterprise-reference-
//     architectures/nvl72-ai-factory/latest/components.html
//   ConnectX-8 SuperNIC: 800 Gb/s, PCIe gen6 with a built-in gen6 switch; on GB300 NVL72 a gen6
//     x16 link to the GPU and a gen5 x16 link to Grace -- NVIDIA at Hot Chips 2025 (as reported,
//     e.g. https://afnnews.qaasid.com/140588). So the NIC's path is NCCL's gen6 x16, 96 GB/s
//     (480 x 100 Mb/s per lane), not gb200's 48: NCCL's Blackwell inter speed list tops at 96.
//   NVLink 5 at 1.8 TB/s per GPU both ways: 18 x 40.1 GB/s in NCCL, as GB200.
//   Not set: the B300's HBM3e rate (8 TB/s is quoted by secondary pages only; the arch's default
//     stands: it only times a one-rank copy). OCI runs the 800G port as 2 x 400G RoCE per GPU
//     (oci-gpu-quickstarts@61eba7f GB300 README): one 100 GB/s NIC per GPU here either way.
#include <string>
#include <vector>

#include "rail_fabric.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {
namespace {

constexpr int kTrays = 18;
constexpr int kGpusPerTray = 4;
constexpr int kGpus = kTrays * kGpusPerTray;  // 72
constexpr int kNvlinksPerGpu = 18;
constexpr int kSwitchChips = 18;
constexpr int kMaxRacks = 128;  // 9216 GPUs, the scale of h100-cluster-1024
// The Grace host's launch per GPU of a `-g N` thread (sim/src/host_launch.h): a tray's Grace
// launches a `-g 4` call's 4 GPUs in 15.36 us, Azure ND GB200 v6, NCCL 2.25.1, all_reduce 1 KiB
// (tests/fidelity/figures/nvl72.csv, the row marked "fit:"; its 2 KiB - 1 MiB rows are judged).
constexpr double kGraceGroupLaunchUs = 15.36 / 4.0;

// What differs between the two racks: the NIC and its PCIe path.
struct RackKind {
  std::string_view name;  // "gb200-nvl72"
  std::string_view gpu;   // "GB200"
  double nic_gbps;        // one NIC per GPU
  std::string_view nic;   // "400G"
  int nic_pcie_gen;       // the GPU - NIC path, x16
  std::string_view description;
};
constexpr RackKind kGb200{
    "gb200-nvl72",
    "GB200",
    50.0,
    "400G",
    5,  // ConnectX-7, 400 Gb/s, gen5 x16
    "NVIDIA GB200 NVL72: 72 B200 + 36 Grace in one NVLink 5 domain (18 switch chips, NVLS), "
    "18 NVLink5 x 40.1 GB/s (NCCL), 72 x 400G NICs"};
constexpr RackKind kGb300{
    "gb300-nvl72",
    "GB300",
    100.0,
    "800G",
    6,  // ConnectX-8, 800 Gb/s, gen6 x16
    "NVIDIA GB300 NVL72: 72 B300 + 36 Grace in one NVLink 5 domain (18 switch chips, NVLS), "
    "18 NVLink5 x 40.1 GB/s (NCCL), 72 x 800G ConnectX-8 NICs on PCIe gen6"};

// One rack as node `rack` with its first `trays` trays (a job's share of it); returns its NICs in
// rail order.
std::vector<VertexId> add_rack(TopologyBuilder& b, const RackKind& kind, int rack,
                               const std::string& p, int trays = kTrays) {
  const double nvlink_gbps = kNvlinksPerGpu * nvlink_link_bandwidth_gbps(GpuArch::blackwell);
  const LinkSpec pcie{.type = LinkType::pcie,
                      .bandwidth_gbps = pcie_bandwidth_gbps(kind.nic_pcie_gen, 16),
                      .latency_us = PresetLatencies::pcie_us,
                      .lanes = 16};
  const VertexId nvswitch = b.add_vertex({.kind = VertexKind::nvswitch,
                                          .name = p + "nvswitch",
                                          .node = rack,
                                          .physical_switches = kSwitchChips});
  std::vector<VertexId> nics;
  const int gpus = trays * kGpusPerTray;
  for (int t = 0; t < trays; ++t) {
    const std::string tray = p + "t" + std::to_string(t) + ".";
    const VertexId grace[2] = {b.add_cpu(tray + "cpu0", rack), b.add_cpu(tray + "cpu1", rack)};
    for (int i = 0; i < kGpusPerTray; ++i) {
      const std::string local = std::to_string(i);
      const VertexId gpu =
          b.add_gpu(tray + "gpu" + local, rack, rack * gpus + t * kGpusPerTray + i);
      b.connect(gpu, nvswitch,
                {.type = LinkType::nvlink,
                 .bandwidth_gbps = nvlink_gbps,
                 .latency_us = PresetLatencies::nvlink_us,
                 .lanes = kNvlinksPerGpu});
      const VertexId sw = b.add_switch(VertexKind::pcie_switch, tray + "pcie" + local, rack);
      b.connect(sw, grace[i / 2], pcie);
      b.connect(gpu, sw, pcie);
      nics.push_back(b.add_nic(tray + "nic" + local, rack, kind.nic_gbps));
      b.connect(nics.back(), sw, pcie);
    }
  }
  return nics;
}

Topology one_rack(const RackKind& kind) {
  TopologyBuilder b{std::string(kind.name)};
  b.description(std::string(kind.description))
      .arch(GpuArch::blackwell)
      .host_cpu(HostCpu::arm)  // Grace
      .pcie_gen(kind.nic_pcie_gen)
      .nvls(true)
      .group_launch_us(kGraceGroupLaunchUs);
  add_rack(b, kind, 0, "");
  return b.seal();
}

// A job's share of R racks: G GPUs of each (whole trays of 4), as a scheduler places a 128-GPU job
// as 2 x 64 (each rack's NVLink domain and NICs of those trays only); named
// <kind>-cluster-RxG (<kind>-cluster-R when G = 72).
Topology partial(const RackKind& kind, int racks, int gpus_per_rack) {
  const std::string cluster = std::string(kind.name) + "-cluster-";
  if (racks < 1 || racks > kMaxRacks) {
    throw ConfigError("preset " + cluster + "R: R (racks) must be in 1.." +
                      std::to_string(kMaxRacks) + ", got " + std::to_string(racks));
  }
  if (gpus_per_rack < kGpusPerTray || gpus_per_rack > kGpus || gpus_per_rack % kGpusPerTray != 0) {
    throw ConfigError("preset " + cluster +
                      "RxG: G (GPUs per rack) must be whole trays of 4 in 4..72, got " +
                      std::to_string(gpus_per_rack));
  }
  const bool whole = gpus_per_rack == kGpus;
  TopologyBuilder b(cluster + std::to_string(racks) +
                    (whole ? "" : "x" + std::to_string(gpus_per_rack)));
  b.description(std::to_string(racks) + " x " + std::string(kind.gpu) + " NVL72 (" +
                std::to_string(racks * gpus_per_rack) + " GPUs, " + std::to_string(gpus_per_rack) +
                " per NVLink domain) on a rail-optimized two-level fat-tree, " +
                std::to_string(gpus_per_rack) + " x " + std::string(kind.nic) + " NICs per rack")
      .arch(GpuArch::blackwell)
      .host_cpu(HostCpu::arm)  // Grace
      .pcie_gen(kind.nic_pcie_gen)
      .nvls(true)
      .group_launch_us(kGraceGroupLaunchUs);
  const presets::RailFabric fabric =
      presets::add_rail_fabric(b, racks, gpus_per_rack, kind.nic_gbps);
  for (int r = 0; r < racks; ++r) {
    const std::vector<VertexId> nics =
        add_rack(b, kind, r, "n" + std::to_string(r) + ".", gpus_per_rack / kGpusPerTray);
    for (int k = 0; k < gpus_per_rack; ++k) {
      b.connect(nics[static_cast<std::size_t>(k)], fabric.leaf(r, k), fabric.network);
    }
  }
  return b.seal();
}

}  // namespace

Topology gb200_nvl72() { return one_rack(kGb200); }
Topology gb200_nvl72_cluster(int racks) { return partial(kGb200, racks, kGpus); }
Topology gb200_nvl72_partial(int racks, int gpus_per_rack) {
  return partial(kGb200, racks, gpus_per_rack);
}
Topology gb300_nvl72() { return one_rack(kGb300); }
Topology gb300_nvl72_cluster(int racks) { return partial(kGb300, racks, kGpus); }
Topology gb300_nvl72_partial(int racks, int gpus_per_rack) {
  return partial(kGb300, racks, gpus_per_rack);
}

}  // namespace twinccl::topo
