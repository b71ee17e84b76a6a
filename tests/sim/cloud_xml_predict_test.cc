// Published cloud NCCL topology files (topologies/examples/nccl-xml/) predict plausibly: an
// all_reduce of 1 GiB over every GPU of the node, bus bandwidth in a range that machine reaches
// (NVSwitch nodes well above PCIe, PCIe-only nodes at their PCIe link).
#include <catch2/catch.hpp>
#include <filesystem>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/nccl_xml_hints.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;

namespace {

double busbw_1gib(const topo::Topology& t) {
  sim::Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = (std::size_t{1} << 30) / 4;
  return sim::predict(t, r).busbw_gbps;
}

double busbw_1gib(const std::string& file, const topo::NcclXmlHints& hints) {
  const auto path =
      std::filesystem::path(TWINCCL_SOURCE_DIR) / "topologies" / "examples" / "nccl-xml" / file;
  return busbw_1gib(topo::load_topology(path.string(), hints));
}

}  // namespace

TEST_CASE("cloud NCCL XML files: all_reduce 1 GiB bus bandwidth is plausible") {
  struct Case {
    std::string file;
    topo::NcclXmlHints hints;
    double lo, hi;  // GB/s
  };
  const std::vector<Case> cases{
      {"azure-ndv4-topo.xml", {.gpu = "a100"}, 150, 240},  // nccl-tests: ~230 on ND A100 v4
      {"aws-p4d-24xl-topo.xml", {}, 150, 240},             // same HGX A100 board
      {"aws-p4de-24xl-topo.xml", {}, 150, 240},
      {"azure-ndv5-topo.xml", {.gpu = "h100"}, 300, 500},  // ~360 ring, ~480 NVLS
      {"aws-p5.48xl-topo.xml", {.gpu = "h100"}, 300, 500},
      {"azure-ndv2-topo.xml", {.gpu = "v100"}, 20, 140},  // DGX-1 class cube-mesh
      {"azure-ncv4-topo.xml", {}, 3, 12},                 // PCIe only, NCCL's 12 GB/s
      // Bare-busid files with what the machine has: 8 A10G on PCIe (the slots' 8 GT/s x16
      // fallback, 12 GB/s), and 8 H100 on NVSwitch behind the 2023 p5 file's PCIe switches.
      {"aws-g5.48xl-topo.xml",
       {.gpu = "a10g", .nic_gbps = 100, .gpu_count = 8, .nic_count = 1},
       3,
       12},
      {"aws-p5.48xl-topo-2023.xml",
       {.gpu = "h100", .nic_gbps = 100, .gpu_count = 8, .nic_count = 32},
       300,
       500},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    const double busbw = busbw_1gib(c.file, c.hints);
    CAPTURE(busbw);
    CHECK(busbw >= c.lo);
    CHECK(busbw <= c.hi);
  }
}

TEST_CASE("one node's NCCL XML x 4 nodes (--nodes) predicts like the h100-cluster-4 preset") {
  // Azure ND H100 v5: 8 H100 on NVSwitch, 8 x 400 Gb/s NICs, as a DGX H100; 4 nodes on rails.
  const double xml =
      busbw_1gib("azure-ndv5-topo.xml", {.gpu = "h100", .nic_gbps = 400, .nodes = 4});
  const double preset = busbw_1gib(topo::load_topology("h100-cluster-4"));
  CAPTURE(xml, preset);
  CHECK(xml == Approx(preset).epsilon(0.15));
  // Across nodes the network bounds it: below the one-node NVSwitch figure.
  CHECK(xml < busbw_1gib("azure-ndv5-topo.xml", {.gpu = "h100", .nic_gbps = 400}));
}
