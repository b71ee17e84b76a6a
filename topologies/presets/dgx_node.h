// Internal to the presets: one DGX-style node (8 GPUs on an NVSwitch fabric, 4 PCIe switches
// each holding 2 GPUs and 2 NICs, 2 CPU sockets) added to a builder. dgx_a100, dgx_h100 and
// h100_cluster share it; the drawing is in dgx_h100.cc.
#pragma once

#include <string>
#include <vector>

#include "twinccl/topologies/builder.h"

namespace twinccl::topo::presets {

struct DgxNodeSpec {
  int node = 0;
  std::string prefix;        // vertex names start with it: "n3." (or "" for one node)
  int nvlinks_per_gpu = 18;  // NVLinks from one GPU into the NVSwitch fabric
  double nvlink_link_bandwidth_gbps = 20.6;
  int physical_nvswitches = 4;
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

}  // namespace twinccl::topo::presets
