// Topology files: TwinCCL's JSON format (read and write) and NCCL_TOPO_FILE XML (read, one node).
//
//   topo::save_topology_json(topo::dgx_h100(), "dgx.json");
//   topo::Topology t = topo::load_topology_json("dgx.json");      // same graph back
//   topo::Topology n = topo::load_nccl_xml("/etc/nccl/topo.xml");  // NCCL's format
//
// The JSON format (docs/topologies.md): {"version": 1, "name", "description", "arch",
// "pcie_gen", "nvls", "defaults": {"link": {...}}, "node_templates": {NAME: {"vertices",
// "links"}}, "nodes": [{"template", "count"}], "vertices": [...], "links": [...]}. Entries may
// repeat ("repeat": 8 or "for_each": {"node": 4, "i": 8}) with {i}, {node/32}, {i%4} in names.
// Every error is a ConfigError naming the source, the JSON path or XML element, the field and
// the bad value: "c.json: links[3].bandwidth_gbps: must be > 0, got -5".
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "twinccl/topologies/topology.h"

namespace twinccl::topo {

// Every vertex and link written out explicitly (no templates); reading it gives the same graph.
std::string to_json(const Topology& topology);
// `source` names the text in error messages (a file path, "<stdin>").
Topology topology_from_json(std::string_view text, std::string_view source = "<json>");
Topology load_topology_json(const std::filesystem::path& path);
void save_topology_json(const Topology& topology, const std::filesystem::path& path);

// NCCL topology XML for one node: <system version="1"><cpu numaid=..><pci busid=.. class=..
// link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev= sm= rank=><nvlink target= count=/>...
// sm 80 -> ampere, 90 -> hopper, 100 -> blackwell (NVLink 20 / 20.6 / 40.1 GB/s per link);
// all NVSwitches become one nvswitch vertex (as NCCL does); NICs from <nic><net speed=(Mb/s)/>.
Topology topology_from_nccl_xml(std::string_view text, std::string_view source = "<xml>");
Topology load_nccl_xml(const std::filesystem::path& path);

}  // namespace twinccl::topo
