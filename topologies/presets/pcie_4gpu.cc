// pcie-4gpu: a workstation-style server, 4 GPUs under one PCIe gen4 switch, no NVLink.
//
//   gpu0   gpu1   gpu2   gpu3       ranks 0..3, each PCIe gen4 x16 = 24 GB/s (NCCL's table)
//     \      \     /      /
//      +---- pcie0 -----+           one PCIe switch: GPU <-> GPU is 2 hops, 24 GB/s
//             |
//            cpu0                   switch uplink gen4 x16 = 24 GB/s
//
// Every GPU-to-GPU transfer shares the switch; no NIC (single node).
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {

Topology pcie_4gpu() {
  TopologyBuilder b("pcie-4gpu");
  b.description("4 Ampere GPUs under one PCIe gen4 switch, no NVLink, one CPU")
      .arch(GpuArch::ampere)
      .pcie_gen(4);
  const LinkSpec pcie{.type = LinkType::pcie,
                      .bandwidth_gbps = pcie_bandwidth_gbps(4, 16),
                      .latency_us = PresetLatencies::pcie_us,
                      .lanes = 16};
  const VertexId cpu = b.add_cpu("cpu0", 0);
  const VertexId sw = b.add_switch(VertexKind::pcie_switch, "pcie0", 0);
  b.connect(sw, cpu, pcie);
  for (int g = 0; g < 4; ++g) b.connect(b.add_gpu("gpu" + std::to_string(g), 0), sw, pcie);
  return b.seal();
}

}  // namespace twinccl::topo
