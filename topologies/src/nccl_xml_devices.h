// Internal to the NCCL XML importer: GPU models, PCI ids and classes (nccl_xml_devices.cc).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "twinccl/topologies/nccl_xml_hints.h"

namespace twinccl::topo::nccl_xml {

struct GpuModel {
  std::string_view name, description;
  int sm;
  int nvlinks;         // per GPU; 0 for PCIe parts
  double nvlink_gbps;  // one link, one direction (NCCL's figure for the sm)
};

const GpuModel* gpu_model(std::string_view name);  // by --gpu name; nullptr when unknown
// By PCI vendor and device id as the file writes them ("0x10de", "0x2330"); nullptr if unknown.
const GpuModel* gpu_model_by_pci_id(std::string_view vendor, std::string_view device);
// The line rate in Gb/s of a NIC known by PCI id (ConnectX-5/6/7, AWS EFA); 0 when unknown.
double nic_gbps_by_pci_id(std::string_view vendor, std::string_view device);
// NCCL's NVLink bandwidth per link for an sm (60: 18, 70/80: 20, 86: 12, 90: 20.6, 100+: 40.1).
double nvlink_gbps_for_sm(int sm);
GpuArch arch_for_sm(int sm);
std::string model_names();  // "v100, v100-pcie, a100, ..." for messages

// PCI class codes as NCCL writes them ("0x030200"): display/3D controller, network controller.
bool is_gpu_class(std::string_view cls);
bool is_nic_class(std::string_view cls);

// The DGX-1 (V100 SXM2) hybrid cube-mesh: NVLinks between GPU a and b (0..7), 0 for none.
int cube_mesh_links(int a, int b);

}  // namespace twinccl::topo::nccl_xml
