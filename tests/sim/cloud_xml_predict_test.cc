// Published cloud NCCL topology files (topologies/examples/nccl-xml/) predict plausibly: an
// all_reduce of 1 GiB over every GPU of the node, bus bandwidth in a range that machine reaches
// (NVSwitch nodes well above PCIe, PCIe-only nodes at their PCIe link).
#include <catch2/catch.hpp>

#include <filesystem>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/nccl_xml_hints.h"

using namespace twinccl;

namespace {

double busbw_1gib(const std::string& file, const topo::NcclXmlHints& hints) {
  const auto path = std::filesystem::path(TWINCCL_SOURCE_DIR) / "topologies" / "examples" / "nccl-xml" / file;
  const topo::Topology t = topo::load_nccl_xml(path, hints).topology;
  sim::Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = (std::size_t{1} << 30) / 4;
  return sim::predict(t, r).busbw_gbps;
}

}  // namespace

TEST_CASE("cloud NCCL XML files: all_reduce 1 GiB bus bandwidth is plausible") {
  struct Case {
    std::string file;
    topo::NcclXmlHints hints;
    double lo, hi;  // GB/s
  };
  const std::vector<Case> cases{
      {"azure-ndv4-topo.xml", {.gpu = "a100"}, 150, 240},      // nccl-tests: ~230 on ND A100 v4
      {"aws-p4d-24xl-topo.xml", {}, 150, 240},                 // same HGX A100 board
      {"aws-p4de-24xl-topo.xml", {}, 150, 240},
      {"azure-ndv5-topo.xml", {.gpu = "h100"}, 300, 500},      // ~360 ring, ~480 NVLS
      {"aws-p5.48xl-topo.xml", {.gpu = "h100"}, 300, 500},
      {"azure-ndv2-topo.xml", {.gpu = "v100"}, 20, 140},       // DGX-1 class cube-mesh
      {"azure-ncv4-topo.xml", {}, 3, 12},                      // PCIe only, NCCL's 12 GB/s
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    const double busbw = busbw_1gib(c.file, c.hints);
    CAPTURE(busbw);
    CHECK(busbw >= c.lo);
    CHECK(busbw <= c.hi);
  }
}
