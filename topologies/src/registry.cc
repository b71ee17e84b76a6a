// The preset registry: names and patterns -> preset functions; .json / .xml paths -> readers.
#include <charconv>
#include <optional>
#include <string>
#include <utility>

#include "twinccl/errors.h"
#include "twinccl/output_file.h"
#include "twinccl/topologies/preset_family.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

namespace twinccl::topo {
namespace {

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<double> parse_double(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// "torus-4x4" or "torus-4x4-100" (link GB/s).
std::optional<Topology> torus_by_name(std::string_view name) {
  if (name.substr(0, 6) != "torus-") return std::nullopt;
  std::string_view rest = name.substr(6);
  double gbps = 50.0;
  if (const std::size_t dash = rest.find('-'); dash != std::string_view::npos) {
    const auto bw = parse_double(rest.substr(dash + 1));
    if (!bw) return std::nullopt;
    gbps = *bw;
    rest = rest.substr(0, dash);
  }
  const std::size_t x = rest.find('x');
  if (x == std::string_view::npos) return std::nullopt;
  const auto rows = parse_int(rest.substr(0, x));
  const auto cols = parse_int(rest.substr(x + 1));
  if (!rows || !cols) return std::nullopt;
  if (!(gbps > 0))
    throw ConfigError("preset '" + std::string(name) + "': link bandwidth must be > 0");
  return torus_2d(*rows, *cols, gbps);
}

// "gb200-nvl72-cluster-RxG", "gb300-...": G GPUs of each of R racks (a job's share, as a
// scheduler places it).
std::optional<Topology> partial_racks_by_name(std::string_view name) {
  constexpr std::string_view gb200 = "gb200-nvl72-cluster-", gb300 = "gb300-nvl72-cluster-";
  const bool is_gb300 = name.substr(0, gb300.size()) == gb300;
  if (!is_gb300 && name.substr(0, gb200.size()) != gb200) return std::nullopt;
  const std::string_view rest = name.substr(gb200.size());
  const std::size_t x = rest.find('x');
  if (x == std::string_view::npos) return std::nullopt;
  const auto racks = parse_int(rest.substr(0, x));
  const auto gpus = parse_int(rest.substr(x + 1));
  if (!racks || !gpus) return std::nullopt;
  return is_gb300 ? gb300_nvl72_partial(*racks, *gpus) : gb200_nvl72_partial(*racks, *gpus);
}

// "<prefix>N" for every cluster preset: h100-cluster-16, h100x16, gb200-nvl72-cluster-2, ...
std::optional<Topology> cluster_by_name(std::string_view name) {
  struct Cluster {
    std::string_view prefix;
    Topology (*make)(int);
  };
  static constexpr Cluster kClusters[] = {
      {"h100-cluster-", h100_cluster},
      {"h100x", h100_cluster},
      {"h200-cluster-", h200_cluster},
      {"h200x", h200_cluster},
      {"b200-cluster-", b200_cluster},
      {"b200x", b200_cluster},
      {"b300-cluster-", b300_cluster},
      {"b300x", b300_cluster},
      {"mi300x-cluster-", mi300x_cluster},
      {"gb200-nvl72-cluster-", gb200_nvl72_cluster},
      {"gb300-nvl72-cluster-", gb300_nvl72_cluster},
  };
  for (const Cluster& c : kClusters) {
    if (name.substr(0, c.prefix.size()) != c.prefix) continue;
    const auto nodes = parse_int(name.substr(c.prefix.size()));
    if (!nodes) return std::nullopt;
    return c.make(*nodes);
  }
  return std::nullopt;
}

}  // namespace

std::vector<PresetInfo> list_presets() {
  return {
      {"dgx-a100",
       "NVIDIA DGX A100: 8 A100, 6 NVSwitches, 12 NVLink3 x 20 GB/s (NCCL), 8 x 200G NICs, PCIe "
       "gen4",
       "dgx-a100"},
      {"dgx-h100",
       "NVIDIA DGX H100: 8 H100, NVSwitch gen3 + NVLS, 18 NVLink4 x 20.6 GB/s, 8 x 400G NICs",
       "dgx-h100"},
      {"dgx-h200", "NVIDIA DGX H200: 8 H200 (141 GB HBM3e), as dgx-h100: NVLS, 8 x 400G NICs",
       "dgx-h200"},
      {"dgx-b200",
       "NVIDIA DGX B200: 8 B200, 2 NVLink 5 switches + NVLS, 18 NVLink5 x 40.1 GB/s, 8 x 400G NICs",
       "dgx-b200"},
      {"dgx-b300",
       "NVIDIA DGX B300: 8 B300, NVLink 5 switches + NVLS, as dgx-b200, 8 x 800G ConnectX-8 "
       "(InfiniBand XDR)",
       "dgx-b300"},
      {"gb200-nvl72",
       "NVIDIA GB200 NVL72 rack: 72 B200 in one NVLink 5 domain (NVLS), 72 x 400G NICs",
       "gb200-nvl72"},
      {"mi300x-8", "8 AMD MI300X, full xGMI mesh (7 x 48 GB/s), no switch, no NVLS, 8 x 400G NICs",
       "mi300x-8"},
      {"pcie-4gpu", "4 GPUs under one PCIe gen4 switch, no NVLink", "pcie-4gpu"},
      {"h100-cluster-N",
       "N x DGX H100 (N = 1..1024) on a rail-optimized two-level fat-tree; also h100xN",
       "h100-cluster-16"},
      {"h200-cluster-N", "N x DGX H200 (N = 1..1024), as h100-cluster-N; also h200xN",
       "h200-cluster-16"},
      {"b200-cluster-N", "N x DGX B200 (N = 1..1024), as h100-cluster-N; also b200xN",
       "b200-cluster-16"},
      {"b300-cluster-N",
       "N x DGX B300 (N = 1..1024) on 800G XDR rails, as h100-cluster-N; also b300xN",
       "b300-cluster-16"},
      {"gb200-nvl72-cluster-R",
       "R GB200 NVL72 racks (R = 1..128, 72 GPUs per NVLink domain) on a rail-optimized fat-tree",
       "gb200-nvl72-cluster-4"},
      {"gb200-nvl72-cluster-RxG",
       "a job's G GPUs (whole trays, 4..72) of each of R GB200 NVL72 racks, e.g. 128 GPUs as 2 x "
       "64",
       "gb200-nvl72-cluster-2x64"},
      {"gb300-nvl72",
       "NVIDIA GB300 NVL72 rack: 72 B300 in one NVLink 5 domain (NVLS), 72 x 800G ConnectX-8 "
       "(PCIe gen6)",
       "gb300-nvl72"},
      {"gb300-nvl72-cluster-R[xG]",
       "R GB300 NVL72 racks (R = 1..128), or G GPUs (whole trays) of each, as gb200's",
       "gb300-nvl72-cluster-2x64"},
      {"mi300x-cluster-N", "N x 8-MI300X servers (N = 1..1024) on a rail-optimized fat-tree",
       "mi300x-cluster-16"},
      {"aws-p4d-N", "N x AWS p4d.24xlarge: 8 A100 40GB, 4 x 100G EFA", "aws-p4d-2"},
      {"aws-p4de-N", "N x AWS p4de.24xlarge: 8 A100 80GB, 4 x 100G EFA", "aws-p4de-2"},
      {"aws-p5-N", "N x AWS p5.48xlarge: 8 H100, 32 x 100G EFA (8 rails of 4)", "aws-p5-2"},
      {"aws-p5e-N", "N x AWS p5e.48xlarge: 8 H200, 32 x 100G EFA", "aws-p5e-2"},
      {"aws-p5en-N", "N x AWS p5en.48xlarge: 8 H200, 16 x 200G EFAv3", "aws-p5en-2"},
      {"aws-p6-b200-N", "N x AWS p6-b200.48xlarge: 8 B200, 8 x 400G EFAv4", "aws-p6-b200-2"},
      {"aws-p6-b300-N", "N x AWS p6-b300.48xlarge: 8 B300, 16 x 400G EFA (8 rails of 2)",
       "aws-p6-b300-2"},
      {"gcp-a3mega-N", "N x GCP a3-megagpu-8g: 8 H100, 8 x 200G GPUDirect-TCPXO", "gcp-a3mega-2"},
      {"gcp-a3high-N", "N x GCP a3-highgpu-8g: 8 H100, 4 x 200G GPUDirect-TCPX", "gcp-a3high-2"},
      {"gcp-a4-N", "N x GCP a4-highgpu-8g: 8 B200, 8 x 400G RoCE", "gcp-a4-2"},
      {"azure-ndv5-N", "N x Azure ND H100 v5: 8 H100, 8 x 400G InfiniBand", "azure-ndv5-2"},
      {"oci-a100-N", "N x OCI BM.GPU.A100-v2.8: 8 A100 80GB, 16 x 100G RoCE", "oci-a100-2"},
      {"oci-h100-N", "N x OCI BM.GPU.H100.8: 8 H100, 16 x 200G RoCE (8 dual-port cards)",
       "oci-h100-2"},
      {"mi300x-roce-N", "N x 8 AMD MI300X (xGMI), 8 x 400G RoCE", "mi300x-roce-2"},
      {"mi325x-roce-N", "N x 8 AMD MI325X (xGMI), 8 x 400G RoCE", "mi325x-roce-2"},
      {"mi355x-roce-N", "N x 8 AMD MI355X (xGMI), 8 x 400G RoCE (OCI: Pollara)", "mi355x-roce-2"},
      {"torus-RxC[-GBPS]",
       "R x C 2D torus of accelerators, wrap-around, GBPS per link (default 50)", "torus-4x4"},
  };
}

bool names_topology_json(std::string_view name) { return ends_with(name, ".json"); }

Topology load_topology(std::string_view preset_or_path) {
  const std::string name(preset_or_path);
  if (names_topology_json(name)) return load_topology_json(name);
  if (ends_with(name, ".xml")) return load_nccl_xml(name);
  if (name == "dgx-a100") return dgx_a100();
  if (name == "dgx-h100") return dgx_h100();
  if (name == "dgx-h200") return dgx_h200();
  if (name == "dgx-b200") return dgx_b200();
  if (name == "dgx-b300") return dgx_b300();
  if (name == "gb200-nvl72") return gb200_nvl72();
  if (name == "gb300-nvl72") return gb300_nvl72();
  if (name == "mi300x-8") return mi300x_8();
  if (name == "pcie-4gpu") return pcie_4gpu();
  if (auto t = partial_racks_by_name(name)) return *t;
  if (auto t = cluster_by_name(name)) return *t;
  if (auto t = cloud_cluster(name)) return *t;
  if (auto t = torus_by_name(name)) return *t;
  std::string known;
  for (const PresetInfo& p : list_presets()) known += "\n  " + p.pattern + "  " + p.description;
  throw ConfigError("unknown topology '" + shown_value(name) +
                    "': not a preset, and not a path ending in .json or .xml. Presets:" + known);
}

}  // namespace twinccl::topo

namespace twinccl::topo {

namespace {

// The cluster family of each one-node preset: its node repeated N times ("-N", or "-RxG" racks).
std::string_view cluster_family(std::string_view one_node) {
  static constexpr std::pair<std::string_view, std::string_view> kFamilies[] = {
      {"dgx-h100", "h100-cluster-"},          {"dgx-h200", "h200-cluster-"},
      {"dgx-b200", "b200-cluster-"},          {"dgx-b300", "b300-cluster-"},
      {"mi300x-8", "mi300x-cluster-"},        {"gb200-nvl72", "gb200-nvl72-cluster-"},
      {"gb300-nvl72", "gb300-nvl72-cluster-"}};
  for (const auto& [node, family] : kFamilies) {
    if (node == one_node) return family;
  }
  return {};
}

// Whether `name` loads as a preset of `nodes` nodes whose first `ranks` GPUs span all of them
// (nodes of equal size, as the presets').
bool spans(const std::string& name, int nodes, int ranks) {
  try {
    const Topology t = load_topology(name);
    const int per_node = t.gpu_count() / t.node_count();
    return t.node_count() == nodes && t.gpu_count() >= ranks && per_node > 0 &&
           (ranks + per_node - 1) / per_node == nodes;
  } catch (const Error&) {
    return false;  // not a preset of that size (out of its range, or not a preset's name)
  }
}

}  // namespace

std::optional<std::string> preset_with_nodes(std::string_view topology_name, int nodes, int ranks) {
  const std::string_view base = topology_name.substr(0, topology_name.find('+'));
  if (nodes < 1 || ranks < 1 || names_topology_json(base)) return std::nullopt;
  std::string prefix(cluster_family(base));
  if (prefix.empty()) {  // "NAME-N" or "NAME-RxG"
    const std::size_t dash = base.rfind('-');
    if (dash == std::string_view::npos) return std::nullopt;
    const std::string_view size = base.substr(dash + 1);
    if (!parse_int(size.substr(0, size.find('x')))) return std::nullopt;
    prefix = std::string(base.substr(0, dash + 1));
  }
  // The job's GPUs on each node ("-RxG": racks that hold more), else whole nodes ("-N").
  const std::string whole = prefix + std::to_string(nodes);
  if (ranks % nodes == 0) {
    const std::string part = whole + "x" + std::to_string(ranks / nodes);
    if (spans(part, nodes, ranks)) return part;
  }
  if (spans(whole, nodes, ranks)) return whole;
  return std::nullopt;
}

}  // namespace twinccl::topo
