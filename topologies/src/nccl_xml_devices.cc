// GPU models and PCI ids the NCCL XML importer recognises (nccl_xml_devices.h).
//
// Device ids are NVIDIA's (vendor 0x10de) as `lspci -nn` and the PCI ID repository list them.
// Every vendor:device id in kNvidiaIds and kNics was checked line by line against the PCI ID
// Repository's pci.ids (github.com/pciutils/pciids, version 2026.08.22; the older ones also in
// Debian's pci.ids package 2023.04.11): 10de:1db1/1db5 "Tesla V100 SXM2 16GB/32GB", 1db4/1db6
// "V100 PCIe", 1eb8 "Tesla T4", 20b0/20b2 "A100 SXM4 40GB/80GB", 20b1/20b5/20f1 "A100 PCIe",
// 2236 "A10", 2237 "A10G", 27b8 "L4", 26b9 "L40S", 2330 "H100 SXM5 80GB", 2335 "H200 SXM
// 141GB", 2901 "B200"; 15b3:1017 ConnectX-5, 1019 ConnectX-5 Ex, 101b ConnectX-6, 101c its
// virtual function, 101d ConnectX-6 Dx, 1021 ConnectX-7; 1d0f:efa0/efa1/efa2 "Elastic Fabric
// Adapter (EFA)". pci.ids names devices only: the NIC line rates below are the products' (the
// EFA generation per instance type is AWS's, not in pci.ids).
// NVLink counts per GPU are the SXM parts' (V100 SXM2 6, A100 SXM4 12, H100/H200 SXM5 18,
// B200 18); bandwidth per link is NCCL's figure for the sm (../shared/reference/nccl-facts.md).
// NIC rates: ConnectX-5 100 Gb/s, ConnectX-6 200 (HDR), ConnectX-7 400 (NDR), AWS EFA gen1/2
// 100 (p4d, p5), EFA gen3 200 (p5en).
#include "nccl_xml_devices.h"

#include <array>

#include "nccl_xml_attributes.h"
#include "twinccl/errors.h"

namespace twinccl::topo::nccl_xml {
namespace {

constexpr std::array<GpuModel, 12> kModels{{
    {"v100", "V100 SXM2 (sm 70, 6 NVLink2)", 70, 6, 20.0},
    {"v100-pcie", "V100 PCIe (sm 70, no NVLink)", 70, 0, 0},
    {"t4", "T4 (sm 75, PCIe)", 75, 0, 0},
    {"a100", "A100 SXM4 (sm 80, 12 NVLink3)", 80, 12, 20.0},
    {"a100-pcie", "A100 PCIe (sm 80; NVLink bridges only as the file lists them)", 80, 0, 0},
    {"a10", "A10 (sm 86, PCIe)", 86, 0, 0},
    {"a10g", "A10G (sm 86, PCIe; AWS g5)", 86, 0, 0},
    {"l4", "L4 (sm 89, PCIe)", 89, 0, 0},
    {"l40s", "L40S (sm 89, PCIe)", 89, 0, 0},
    {"h100", "H100 SXM5 (sm 90, 18 NVLink4)", 90, 18, 20.6},
    {"h200", "H200 SXM (sm 90, 18 NVLink4)", 90, 18, 20.6},
    {"b200", "B200 (sm 100, 18 NVLink5)", 100, 18, 40.1},
}};

struct PciId {
  std::string_view device, model;
};
constexpr std::array<PciId, 17> kNvidiaIds{{
    {"0x1db1", "v100"},
    {"0x1db5", "v100"},
    {"0x1db4", "v100-pcie"},
    {"0x1db6", "v100-pcie"},
    {"0x1eb8", "t4"},
    {"0x20b0", "a100"},
    {"0x20b2", "a100"},
    {"0x20b1", "a100-pcie"},
    {"0x20b5", "a100-pcie"},
    {"0x20f1", "a100-pcie"},
    {"0x2236", "a10"},
    {"0x2237", "a10g"},
    {"0x27b8", "l4"},
    {"0x26b9", "l40s"},
    {"0x2330", "h100"},
    {"0x2335", "h200"},
    {"0x2901", "b200"},
}};

struct NicId {
  std::string_view vendor, device;
  double gbps;
};
constexpr std::array<NicId, 9> kNics{{
    {"0x15b3", "0x1017", 100},  // ConnectX-5
    {"0x15b3", "0x1019", 100},  // ConnectX-5 Ex
    {"0x15b3", "0x101b", 200},  // ConnectX-6
    {"0x15b3", "0x101c", 200},  // ConnectX-6 virtual function
    {"0x15b3", "0x101d", 200},  // ConnectX-6 Dx
    {"0x15b3", "0x1021", 400},  // ConnectX-7
    {"0x1d0f", "0xefa0", 100},  // EFA (p4d)
    {"0x1d0f", "0xefa1", 100},  // EFA (p5)
    {"0x1d0f", "0xefa2", 200},  // EFA (p5en)
}};

// DGX-1 V100: NVLinks per GPU pair, each GPU 6 in all (GPUs 0-3 and 4-7 are the two quads).
constexpr std::array<std::array<int, 8>, 8> kCubeMesh{{
    {0, 1, 1, 2, 2, 0, 0, 0},
    {1, 0, 2, 1, 0, 2, 0, 0},
    {1, 2, 0, 2, 0, 0, 1, 0},
    {2, 1, 2, 0, 0, 0, 0, 1},
    {2, 0, 0, 0, 0, 1, 1, 2},
    {0, 2, 0, 0, 1, 0, 2, 1},
    {0, 0, 1, 0, 1, 2, 0, 2},
    {0, 0, 0, 1, 2, 1, 2, 0},
}};

}  // namespace

const GpuModel* gpu_model(std::string_view name) {
  for (const GpuModel& m : kModels) {
    if (m.name == lowercase_ascii(name)) return &m;
  }
  return nullptr;
}

const GpuModel* gpu_model_by_pci_id(std::string_view vendor, std::string_view device) {
  if (lowercase_ascii(vendor) != "0x10de") return nullptr;
  for (const PciId& id : kNvidiaIds) {
    if (id.device == lowercase_ascii(device)) return gpu_model(id.model);
  }
  return nullptr;
}

double nic_gbps_by_pci_id(std::string_view vendor, std::string_view device) {
  for (const NicId& id : kNics) {
    if (id.vendor == lowercase_ascii(vendor) && id.device == lowercase_ascii(device)) {
      return id.gbps;
    }
  }
  return 0;
}

double nvlink_gbps_for_sm(int sm) {
  if (sm >= 100) return 40.1;
  if (sm >= 90) return 20.6;
  if (sm == 86 || sm == 87 || sm == 89) return 12.0;
  if (sm >= 70) return 20.0;
  if (sm >= 60) return 18.0;
  return 0;
}

GpuArch arch_for_sm(int sm) {
  return sm >= 100  ? GpuArch::blackwell
         : sm >= 90 ? GpuArch::hopper
         : sm >= 80 ? GpuArch::ampere
                    : GpuArch::unknown;
}

std::string model_names() {
  std::string out;
  for (const GpuModel& m : kModels) out += (out.empty() ? "" : ", ") + std::string(m.name);
  return out;
}

bool is_gpu_class(std::string_view cls) {
  return cls.rfind("0x0302", 0) == 0 || cls.rfind("0x0300", 0) == 0;
}
bool is_nic_class(std::string_view cls) { return cls.rfind("0x02", 0) == 0; }

int cube_mesh_links(int a, int b) {
  if (a < 0 || b < 0 || a > 7 || b > 7) return 0;
  return kCubeMesh[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
}

}  // namespace twinccl::topo::nccl_xml

namespace twinccl::topo {

std::vector<GpuModelInfo> gpu_models() {
  std::vector<GpuModelInfo> out;
  for (const nccl_xml::GpuModel& m : nccl_xml::kModels) {
    out.push_back(
        {std::string(m.name), std::string(m.description), m.sm, m.nvlinks, m.nvlink_gbps});
  }
  return out;
}

NvlinkHint parse_nvlink_hint(std::string_view text) {
  const std::string t = lowercase_ascii(text);
  if (t == "switch" || t == "nvswitch") return NvlinkHint::nvswitch;
  if (t == "direct" || t == "mesh") return NvlinkHint::direct;
  if (t == "none") return NvlinkHint::none;
  if (t == "file") return NvlinkHint::from_file;
  throw InvalidArgument("--nvlink: unknown value '" + std::string(text.substr(0, 100)) +
                        "' (switch, direct, none, file)");
}

}  // namespace twinccl::topo
