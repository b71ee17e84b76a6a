// NCCL topology XML as clouds publish it: partial files and what the user states about them.
//
//   topo::NcclXmlHints hints{.gpu = "h100"};                  // the file lists GPUs only by class
//   topo::NcclXmlImport r = topo::load_nccl_xml("ndv5-topo.xml", hints);
//   for (const std::string& w : r.warnings) std::cerr << "warning: " << w << '\n';
//
// Many published NCCL_TOPO_FILEs (Azure ND-series, AWS p4d) list only the PCI tree: GPUs as PCI
// class 0x0302 devices, NICs as 0x0200/0x0207, no <gpu>, <nvlink> or <net>, because NCCL detects
// GPUs, NVLinks and NICs at run time. The importer recognises GPUs and NICs by class and by PCI
// vendor/device id (NVIDIA 0x10de: V100, A100, A10G, H100, H200, B200...; Mellanox 0x15b3 and
// AWS EFA 0x1d0f NICs), and takes from the hints what the file cannot say. A file that needs a
// hint it was not given is refused with a ConfigError naming that hint (`--gpu MODEL`).
// Some (AWS g5, the 2023 p5 file) list devices by busid alone, for NUMA placement only: the user
// states what the machine has (--gpu MODEL --gpu-count N --nic-count M) and the importer places
// them on those slots (nccl_xml_bare.cc says how). `nodes` > 1 repeats the node on a rail fabric.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/topologies/topology.h"

namespace twinccl::topo {

// How GPUs listed without <nvlink> elements are joined.
enum class NvlinkHint {
  from_file,  // the file's <nvlink>s; for PCI-only GPUs of a known SXM model, the model's fabric
  nvswitch,   // every GPU to one NVSwitch with all its NVLinks
  direct,     // GPU-GPU links: a full mesh (the model's NVLinks split over the peers), or the
              // DGX-1 hybrid cube-mesh for 8 V100 SXM2
  none,       // no NVLink (PCIe parts; also silences the "no NVLink" warning)
};

struct NcclXmlHints {
  std::string gpu =
      {};  // "" = from the file; else a name of gpu_models() ("h100", "a100-pcie", ...)
  NvlinkHint nvlink = NvlinkHint::from_file;
  double nic_gbps = 0;  // line rate of each NIC in Gb/s where the file has none; 0 = unset
  int gpu_count = 0;    // GPUs of a file that lists bare busids (AWS g5, p5 2023); 0 = unset
  int nic_count = -1;   // NICs of such a file; -1 = unset
  int nodes = 1;        // > 1: that many copies of the node on a rail-optimized fat-tree
  bool empty() const {
    return gpu.empty() && nvlink == NvlinkHint::from_file && nic_gbps == 0 && gpu_count == 0 &&
           nic_count < 0 && nodes == 1;
  }
};

struct GpuModelInfo {
  std::string name;         // "h100"
  std::string description;  // "H100 SXM5 (sm 90, 18 NVLink4)"
  int sm = 0;
  int nvlinks = 0;         // per GPU; 0 for PCIe parts
  double nvlink_gbps = 0;  // one NVLink, one direction, as NCCL counts it
};
// Every model --gpu accepts, in a fixed order.
std::vector<GpuModelInfo> gpu_models();

struct NcclXmlImport {
  Topology topology;
  // What was assumed and what looks wrong (e.g. SXM GPUs without NVLink); `topo check` prints them.
  std::vector<std::string> warnings;
  // What was taken from the hints or the GPU model rather than the file (one line each).
  std::vector<std::string> notes;
};

NcclXmlImport import_nccl_xml(std::string_view text, std::string_view source,
                              const NcclXmlHints& hints);
NcclXmlImport load_nccl_xml(const std::filesystem::path& path, const NcclXmlHints& hints);

// Like load_topology(name) (presets.h), with the hints for an .xml file. Hints given for a preset
// or a JSON file are an InvalidArgument (they describe NCCL XML only).
Topology load_topology(std::string_view preset_or_path, const NcclXmlHints& hints);

// `nodes` copies of a one-node topology (an imported NCCL XML) on a rail-optimized two-level
// fat-tree: NIC i of every node on the leaf of rail i, every leaf to every spine, each network
// link at the NIC's line rate (rail_cluster.cc). nodes in 1..1024; a node without NICs is refused.
Topology rail_cluster(const Topology& node, int nodes);

// "switch"/"nvswitch", "direct"/"mesh", "none", "file": the CLI's --nvlink values. Throws
// InvalidArgument listing them.
NvlinkHint parse_nvlink_hint(std::string_view text);

}  // namespace twinccl::topo
