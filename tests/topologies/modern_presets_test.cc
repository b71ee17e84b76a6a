// Presets of today's machines (issue 16): DGX H200 and B200, GB200 NVL72 racks, 8 x MI300X, and
// their clusters. Each passes `topo check` with no warning, draws, and has the counts its
// preset file cites (GPUs, NVLinks, switch chips, NICs, network shape).
#include <catch2/catch.hpp>

#include "twinccl/errors.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {
int count_kind(const Topology& t, VertexKind kind) {
  int n = 0;
  for (const Vertex& v : t.vertices()) n += v.kind == kind;
  return n;
}
}  // namespace

TEST_CASE("new presets pass topo check without warnings and draw", "[topologies][presets]") {
  const std::string name =
      GENERATE("dgx-h200", "dgx-b200", "gb200-nvl72", "mi300x-8", "h200-cluster-2",
               "b200-cluster-3", "gb200-nvl72-cluster-2", "mi300x-cluster-2", "h200x4", "b200x2");
  INFO(name);
  const Topology t = load_topology(name);
  const std::string report = check_report(t);
  CHECK_THAT(report, Contains(": OK (") && Contains("warnings: 0"));
  const std::string drawing = draw_node(t, 0);
  CHECK_THAT(drawing, Contains("gpu"));
  CHECK_THAT(describe(t), Contains(std::to_string(t.gpu_count())));
  for (int r = 0; r < t.gpu_count(); ++r) CHECK(t.vertex(t.gpu(r)).rank == r);
}

TEST_CASE("dgx-h200 is dgx-h100's graph under its own name", "[topologies][presets]") {
  const TopologySummary h200 = dgx_h200().summary();
  const TopologySummary h100 = dgx_h100().summary();
  CHECK(h200.name == "dgx-h200");
  CHECK(h200.arch == GpuArch::hopper);
  CHECK(h200.gpus == 8);
  CHECK(h200.nvls_capable);
  CHECK(h200.nvlinks_per_gpu == 18);
  CHECK(h200.nvlink_bandwidth_gbps == Approx(370.8));
  CHECK(h200.nvswitches_per_node == 4);
  CHECK(h200.nics_per_node == 8);
  CHECK(h200.nic_bandwidth_gbps == Approx(50.0));
  CHECK(h200.vertices == h100.vertices);
  CHECK(h200.links == h100.links);
  CHECK_THAT(dgx_h200().description(), Contains("141 GB"));
}

TEST_CASE("dgx-b200: NVLink 5 at NCCL's 40.1 GB/s, 2 switch chips, NVLS", "[topologies][presets]") {
  const TopologySummary s = dgx_b200().summary();
  CHECK(s.arch == GpuArch::blackwell);
  CHECK(s.gpus == 8);
  CHECK(s.nvlinks_per_gpu == 18);
  CHECK(s.nvlink_link_bandwidth_gbps == Approx(40.1));
  CHECK(s.nvlink_bandwidth_gbps == Approx(721.8));
  CHECK(s.nvswitches_per_node == 2);
  CHECK(s.nvls_capable);
  CHECK(s.pcie_bandwidth_gbps == Approx(48.0));
  CHECK(s.nics_per_node == 8);
  CHECK(s.nic_bandwidth_gbps == Approx(50.0));
}

TEST_CASE("gb200-nvl72: 72 GPUs in one NVLink domain, 18 trays, 72 NICs", "[topologies][presets]") {
  const Topology t = gb200_nvl72();
  const TopologySummary s = t.summary();
  CHECK(s.arch == GpuArch::blackwell);
  CHECK(s.nodes == 1);
  CHECK(s.gpus == 72);
  CHECK(s.nvswitches_per_node == 18);
  CHECK(count_kind(t, VertexKind::nvswitch) == 1);
  CHECK(count_kind(t, VertexKind::cpu) == 36);
  CHECK(s.nvls_capable);
  CHECK(s.nvlinks_per_gpu == 18);
  CHECK(s.nvlink_bandwidth_gbps == Approx(721.8));
  CHECK(s.nics_per_node == 72);
  CHECK(s.nic_bandwidth_gbps == Approx(50.0));
  // Every GPU reaches every other through the switch in 2 hops, and its own NIC in 2.
  CHECK(t.route(0, 71).size() == 2);
  CHECK(t.route(5, 40).size() == 2);
  const VertexId nic = t.home_nic(13).value();
  CHECK(t.vertex(nic).name == "t3.nic1");
}

TEST_CASE("mi300x-8: a full xGMI mesh, no switch, no NVLS", "[topologies][presets]") {
  const Topology t = mi300x_8();
  const TopologySummary s = t.summary();
  CHECK(s.arch == GpuArch::cdna3);
  CHECK(s.gpus == 8);
  CHECK(s.nvswitches_per_node == 0);
  CHECK_FALSE(s.nvls_capable);
  CHECK(s.nvlinks_per_gpu == 7);
  CHECK(s.nvlink_link_bandwidth_gbps == Approx(48.0));
  CHECK(s.nvlink_bandwidth_gbps == Approx(336.0));
  CHECK(s.nics_per_node == 8);
  int gpu_pairs = 0;
  for (const Link& l : t.links()) {
    gpu_pairs += t.vertex(l.a).kind == VertexKind::gpu && t.vertex(l.b).kind == VertexKind::gpu;
  }
  CHECK(gpu_pairs == 28);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a != b) CHECK(t.route(a, b).size() == 1);  // the direct link, never through the host
    }
  }
  CHECK_THAT(describe(t), Contains("xGMI      7 links x 48 GB/s = 336 GB/s") &&
                              Contains("NVLS in-switch reduction: no"));
  CHECK(nvlink_link_bandwidth_gbps(GpuArch::cdna3) == 48.0);
  CHECK(parse_gpu_arch("cdna3") == GpuArch::cdna3);
  CHECK(to_string(GpuArch::cdna3) == "cdna3");
}

TEST_CASE("cluster presets: sizes, network shape and the same fat-tree as h100-cluster-N",
          "[topologies][presets]") {
  const int nodes = GENERATE(1, 2, 33);
  for (const Topology& t : {h200_cluster(nodes), b200_cluster(nodes), mi300x_cluster(nodes)}) {
    const TopologySummary s = t.summary();
    INFO(s.name);
    CHECK(s.nodes == nodes);
    CHECK(s.gpus == 8 * nodes);
    CHECK(s.nics_per_node == 8);
    CHECK(s.network_levels == 2);
    CHECK(s.network_switch_radix == 64);
    CHECK(s.network_switches == (nodes + 31) / 32 * 8 + 32);
    CHECK(s.vertices ==
          h100_cluster(nodes).summary().vertices - (s.nvswitches_per_node == 0) * nodes);
  }
  CHECK(load_topology("b200x2").summary().arch == GpuArch::blackwell);
  CHECK(load_topology("mi300x-cluster-3").summary().arch == GpuArch::cdna3);
}

TEST_CASE("gb200-nvl72-cluster-R: one node per rack, 72 rails", "[topologies][presets]") {
  const int racks = GENERATE(1, 2, 33);
  const Topology t = gb200_nvl72_cluster(racks);
  const TopologySummary s = t.summary();
  CHECK(s.name == "gb200-nvl72-cluster-" + std::to_string(racks));
  CHECK(s.nodes == racks);
  CHECK(s.gpus == 72 * racks);
  CHECK(s.gpus_per_node == 72);
  CHECK(s.nics_per_node == 72);
  CHECK(s.nvls_capable);
  CHECK(s.network_levels == 2);
  CHECK(s.network_switches == (racks + 31) / 32 * 72 + 32);
  if (racks > 1) {
    // Rank 5 of rack 0 -> rank 5 of rack 1: GPU, PCIe, NIC, leaf of rail 5, NIC, PCIe, GPU.
    CHECK(t.route(5, 72 + 5).size() == 6);
  }
}

TEST_CASE("new presets: range errors name the preset and the value, the largest build",
          "[topologies][presets]") {
  CHECK_THROWS_WITH(gb200_nvl72_cluster(0), Contains("gb200-nvl72-cluster-R") && Contains("got 0"));
  CHECK_THROWS_WITH(gb200_nvl72_cluster(129), Contains("1..128"));
  CHECK_THROWS_WITH(b200_cluster(1025), Contains("b200-cluster-N") && Contains("got 1025"));
  CHECK_THROWS_WITH(mi300x_cluster(-1), Contains("mi300x-cluster-N"));
  CHECK_THROWS_AS(load_topology("h200-cluster-0"), twinccl::ConfigError);
  CHECK_THROWS_AS(load_topology("gb200-nvl72-cluster-x"), twinccl::ConfigError);
  const TopologySummary big = gb200_nvl72_cluster(128).summary();
  CHECK(big.gpus == 9216);
  CHECK(big.network_switches == 4 * 72 + 32);
  CHECK(mi300x_cluster(1024).gpu_count() == 8192);
}

TEST_CASE("new presets survive a JSON round trip (arch cdna3 included)", "[topologies][presets]") {
  for (const Topology& t : {mi300x_8(), dgx_b200(), gb200_nvl72()}) {
    INFO(t.name());
    const Topology back = topology_from_json(to_json(t));
    const TopologySummary a = t.summary();
    const TopologySummary b = back.summary();
    CHECK(b.arch == a.arch);
    CHECK(b.nvls_capable == a.nvls_capable);
    CHECK(b.gpus == a.gpus);
    CHECK(b.links == a.links);
    CHECK(b.nvlink_bandwidth_gbps == Approx(a.nvlink_bandwidth_gbps));
    CHECK(b.nics_per_node == a.nics_per_node);
  }
}

TEST_CASE("mi355x-roce-N: 8 MI355X (cdna4), 7 xGMI links of 55.7 GB/s, 8 TB/s HBM, 8 x 400G RoCE",
          "[topologies][presets]") {
  const Topology t = load_topology("mi355x-roce-2");
  const TopologySummary s = t.summary();
  CHECK(s.arch == GpuArch::cdna4);
  CHECK(s.gpus == 16);
  CHECK(s.nvlinks_per_gpu == 7);
  CHECK(s.nvlink_bandwidth_gbps == Approx(390.0));  // AMD's reference busbw over 7 links
  CHECK(device_memory_gbps(GpuArch::cdna4) == 8000.0);
  CHECK(parse_gpu_arch("cdna4") == GpuArch::cdna4);
  CHECK(to_string(GpuArch::cdna4) == "cdna4");
  CHECK_THAT(check_report(t), Contains("warnings: 0"));
}
