// One DGX-style node; see dgx_node.h. GPU i and NIC i sit under PCIe switch i/2, so NIC i is
// GPU i's nearest NIC on its rail; every GPU has one bundled link into the NVSwitch fabric, or
// (mesh) one direct link to each other GPU.
#include "dgx_node.h"

#include "twinccl/topologies/presets.h"

namespace twinccl::topo::presets {

DgxNodeIds add_dgx_node(TopologyBuilder& b, const DgxNodeSpec& spec) {
  constexpr int kGpus = 8;
  constexpr int kPcieSwitches = 4;
  const std::string& p = spec.prefix;
  const double pcie_x16_gbps = pcie_bandwidth_gbps(spec.pcie_gen, 16);
  const LinkSpec pcie{.type = LinkType::pcie,
                      .bandwidth_gbps = pcie_x16_gbps,
                      .latency_us = PresetLatencies::pcie_us,
                      .lanes = 16};

  const bool mesh = spec.fabric == GpuFabric::mesh;
  const VertexId nvswitch = mesh ? -1
                                 : b.add_vertex({.kind = VertexKind::nvswitch,
                                                 .name = p + "nvswitch",
                                                 .node = spec.node,
                                                 .physical_switches = spec.physical_nvswitches});
  const VertexId cpu0 = b.add_cpu(p + "cpu0", spec.node);
  const VertexId cpu1 = b.add_cpu(p + "cpu1", spec.node);
  b.connect(cpu0, cpu1,
            {.type = LinkType::cpu_interconnect,
             .bandwidth_gbps = spec.cpu_interconnect_gbps,
             .latency_us = PresetLatencies::cpu_interconnect_us});
  std::vector<VertexId> pcie_switches;
  for (int s = 0; s < kPcieSwitches; ++s) {
    pcie_switches.push_back(
        b.add_switch(VertexKind::pcie_switch, p + "pcie" + std::to_string(s), spec.node));
    b.connect(pcie_switches.back(), s < kPcieSwitches / 2 ? cpu0 : cpu1, pcie);
  }
  DgxNodeIds ids;
  for (int g = 0; g < kGpus; ++g) {
    ids.gpus.push_back(b.add_gpu(p + "gpu" + std::to_string(g), spec.node, spec.node * kGpus + g));
    b.connect(ids.gpus.back(), pcie_switches[static_cast<std::size_t>(g / 2)], pcie);
    if (mesh) continue;
    b.connect(ids.gpus.back(), nvswitch,
              {.type = LinkType::nvlink,
               .bandwidth_gbps = spec.nvlinks_per_gpu * spec.nvlink_link_bandwidth_gbps,
               .latency_us = PresetLatencies::nvlink_us,
               .lanes = spec.nvlinks_per_gpu});
  }
  for (std::size_t a = 0; mesh && a < ids.gpus.size(); ++a) {
    for (std::size_t c = a + 1; c < ids.gpus.size(); ++c) {
      b.connect(ids.gpus[a], ids.gpus[c],
                {.type = LinkType::nvlink,
                 .bandwidth_gbps = spec.nvlink_link_bandwidth_gbps,
                 .latency_us = PresetLatencies::nvlink_us,
                 .lanes = 1});
    }
  }
  for (int n = 0; n < spec.nics; ++n) {
    ids.nics.push_back(
        b.add_nic(p + "nic" + std::to_string(n), spec.node, spec.nic_bandwidth_gbps));
    b.connect(ids.nics.back(),
              pcie_switches[static_cast<std::size_t>(n * kPcieSwitches / spec.nics)], pcie);
  }
  return ids;
}

}  // namespace twinccl::topo::presets
