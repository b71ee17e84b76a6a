// Preset topologies and the registry that loads a preset name, a .json file or an NCCL .xml file.
//
//   for (const topo::PresetInfo& p : topo::list_presets()) std::cout << p.pattern << '\n';
//   topo::Topology t = topo::load_topology("h100x16");       // or "cluster.json", "node.xml"
//   topo::Topology torus = topo::torus_2d(4, 4, /*link_bandwidth_gbps*/ 100.0);
//
// Every preset is built by TopologyBuilder (builder.h) in its own file under topologies/presets/,
// with an ASCII drawing and the source of each number in its comment.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/topologies/topology.h"

namespace twinccl::topo {

struct PresetInfo {
  std::string pattern;      // "h100-cluster-N"
  std::string description;  // one line
  std::string example;      // a name load_topology accepts: "h100-cluster-16"
};

// Latencies every preset uses, in one place (microseconds per link traversal). See
// docs/topologies.md for where each comes from.
struct PresetLatencies {
  static constexpr double nvlink_us = 0.2;            // GPU <-> NVSwitch port
  static constexpr double pcie_us = 0.25;             // device <-> PCIe switch / root port
  static constexpr double cpu_interconnect_us = 0.3;  // socket <-> socket (UPI / xGMI)
  static constexpr double network_us = 1.0;           // NIC <-> leaf, leaf <-> spine
};

Topology dgx_a100();   // 8 A100, 6 NVSwitches, 12 NVLink3 x 25 GB/s, 8 x 200G NICs, PCIe gen4
Topology dgx_h100();   // 8 H100, 4 NVSwitches, 18 NVLink4 x 20.6 GB/s, NVLS, 8 x 400G, gen5
Topology pcie_4gpu();  // 4 GPUs under one PCIe gen4 switch, no NVLink
// `nodes` DGX H100 on a rail-optimized two-level fat-tree; nodes in 1..1024.
Topology h100_cluster(int nodes);
// Today's machines; each preset's file cites its figures (docs/topologies.md lists them).
Topology dgx_h200();               // 8 H200: dgx-h100's graph (NVLink4, NVLS, 8 x 400G)
Topology h200_cluster(int nodes);  // nodes in 1..1024, as h100_cluster
Topology dgx_b200();               // 8 B200, 2 NVLink 5 switches, 18 x 40.1 GB/s, NVLS, 8 x 400G
Topology b200_cluster(int nodes);  // nodes in 1..1024
// DGX B300: dgx-b200's NVLink 5 node with 8 x 800G ConnectX-8 (InfiniBand XDR) on PCIe gen6.
Topology dgx_b300();
Topology b300_cluster(int nodes);  // nodes in 1..1024
Topology gb200_nvl72();            // one rack: 72 B200 in one NVLink 5 domain, NVLS, 72 x 400G
Topology gb200_nvl72_cluster(int racks);  // racks in 1..128, one node per rack
// A job's G GPUs (whole trays, 4..72) of each of R racks: gb200-nvl72-cluster-RxG ("2x64").
Topology gb200_nvl72_partial(int racks, int gpus_per_rack);
// GB300 NVL72 (Blackwell Ultra): the same NVLink 5 rack, one ConnectX-8 800G NIC per GPU on PCIe
// gen6 x16 (96 GB/s in NCCL's table, not gen5's 48): gb300-nvl72, gb300-nvl72-cluster-R[xG].
Topology gb300_nvl72();
Topology gb300_nvl72_cluster(int racks);  // racks in 1..128
Topology gb300_nvl72_partial(int racks, int gpus_per_rack);
Topology mi300x_8();                 // 8 MI300X, full xGMI mesh (7 x 48 GB/s), no NVLS
Topology mi300x_cluster(int nodes);  // nodes in 1..1024
// The clusters clouds rent, by their names with N nodes (presets/cloud_clusters.cc; list_presets()
// and `twinccl topo list` name every one), e.g. aws-p5-N, gcp-a3mega-N, mi300x-roce-N. nullopt
// when `name` is none of them; ConfigError for N outside 1..1024.
std::optional<Topology> cloud_cluster(std::string_view name);
// A rows x cols 2D torus of accelerators (rows, cols in 1..128), wrap-around in both dimensions.
Topology torus_2d(int rows, int cols, double link_bandwidth_gbps = 50.0,
                  double link_latency_us = 0.5);

std::vector<PresetInfo> list_presets();
// A preset name (see list_presets), a path ending in .json (topology_file.h) or .xml (an
// NCCL_TOPO_FILE). Throws ConfigError naming the input and listing the presets when unknown.
Topology load_topology(std::string_view preset_or_path);
// Whether load_topology reads `name` as a topology JSON file (a name ending in ".json", lower
// case).
bool names_topology_json(std::string_view name);

}  // namespace twinccl::topo
