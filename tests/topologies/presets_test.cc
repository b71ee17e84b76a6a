// Presets: every one seals, validates, and its summary has the documented numbers.
#include "twinccl/topologies/presets.h"

#include <catch2/catch.hpp>

#include "twinccl/errors.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

TEST_CASE("every listed preset loads by its example name", "[topologies][presets]") {
  const std::vector<PresetInfo> presets = list_presets();
  // 13 + 16 clouds + partial GB200 racks + 2 GB300 (gb300_test.cc) + 2 DGX B300
  // (xdr_presets_test.cc)
  REQUIRE(presets.size() == 34);
  for (const PresetInfo& p : presets) {
    INFO(p.pattern);
    CHECK_FALSE(p.description.empty());
    const Topology t = load_topology(p.example);
    CHECK(t.gpu_count() > 0);
    CHECK(t.summary().gpus == t.gpu_count());
    for (int r = 0; r < t.gpu_count(); ++r) CHECK(t.vertex(t.gpu(r)).rank == r);
  }
}

TEST_CASE("dgx-h100 summary", "[topologies][presets]") {
  const TopologySummary s = dgx_h100().summary();
  CHECK(s.name == "dgx-h100");
  CHECK(s.arch == GpuArch::hopper);
  CHECK(s.nodes == 1);
  CHECK(s.gpus == 8);
  CHECK(s.gpus_per_node == 8);
  CHECK(s.uniform_nodes);
  CHECK(s.nvswitches_per_node == 4);
  CHECK(s.nvls_capable);
  CHECK(s.nvlinks_per_gpu == 18);
  CHECK(s.nvlink_link_bandwidth_gbps == Approx(20.6));
  CHECK(s.nvlink_bandwidth_gbps == Approx(370.8));
  CHECK(s.pcie_gen == 5);
  CHECK(s.pcie_bandwidth_gbps == Approx(48.0));
  CHECK(s.nics_per_node == 8);
  CHECK(s.nic_bandwidth_gbps == Approx(50.0));
  CHECK(s.network_switches == 0);
  CHECK(s.network_levels == 0);
}

TEST_CASE("dgx-a100 summary", "[topologies][presets]") {
  const TopologySummary s = dgx_a100().summary();
  CHECK(s.arch == GpuArch::ampere);
  CHECK(s.gpus == 8);
  CHECK(s.nvswitches_per_node == 6);
  CHECK_FALSE(s.nvls_capable);
  CHECK(s.nvlinks_per_gpu == 12);
  CHECK(s.nvlink_link_bandwidth_gbps == Approx(20.0));
  CHECK(s.nvlink_bandwidth_gbps == Approx(240.0));  // 12 x NCCL's SM80 20 GB/s
  CHECK(s.pcie_gen == 4);
  CHECK(s.pcie_bandwidth_gbps == Approx(24.0));
  CHECK(s.nics_per_node == 8);
  CHECK(s.nic_bandwidth_gbps == Approx(25.0));
}

TEST_CASE("pcie-4gpu summary", "[topologies][presets]") {
  const TopologySummary s = pcie_4gpu().summary();
  CHECK(s.gpus == 4);
  CHECK(s.nvlinks_per_gpu == 0);
  CHECK(s.nvlink_bandwidth_gbps == 0.0);
  CHECK(s.nvswitches_per_node == 0);
  CHECK_FALSE(s.nvls_capable);
  CHECK(s.pcie_gen == 4);
  CHECK(s.pcie_bandwidth_gbps == Approx(24.0));
  CHECK(s.nics_per_node == 0);
}

TEST_CASE("h100-cluster-N summary for N in 1, 2, 3, 16, 32, 33, 64", "[topologies][presets]") {
  const int nodes = GENERATE(1, 2, 3, 16, 32, 33, 64);
  const Topology t = h100_cluster(nodes);
  const TopologySummary s = t.summary();
  CHECK(s.name == "h100-cluster-" + std::to_string(nodes));
  CHECK(s.nodes == nodes);
  CHECK(s.gpus == 8 * nodes);
  CHECK(s.gpus_per_node == 8);
  CHECK(s.nvls_capable);
  CHECK(s.nvlink_bandwidth_gbps == Approx(370.8));
  CHECK(s.nics_per_node == 8);
  CHECK(s.nic_bandwidth_gbps == Approx(50.0));
  CHECK(s.network_levels == 2);
  CHECK(s.network_switch_radix == 64);
  const int units = (nodes + 31) / 32;
  CHECK(s.network_switches == units * 8 + 32);
}

TEST_CASE("h100-cluster names and range", "[topologies][presets]") {
  CHECK(load_topology("h100x4").gpu_count() == 32);
  CHECK(load_topology("h100-cluster-2").gpu_count() == 16);
  CHECK_THROWS_WITH(h100_cluster(0), Contains("1..1024") && Contains("got 0"));
  CHECK_THROWS_AS(load_topology("h100-cluster-1025"), twinccl::ConfigError);
  CHECK_THROWS_AS(h100_cluster(-3), twinccl::ConfigError);
}

TEST_CASE("torus presets: sizes, links and names", "[topologies][presets]") {
  const auto [rows, cols, links] = GENERATE(table<int, int, int>({{1, 1, 0},
                                                                  {1, 2, 1},
                                                                  {1, 3, 3},
                                                                  {2, 2, 4},
                                                                  {3, 3, 18},
                                                                  {4, 4, 32},
                                                                  {2, 7, 21},
                                                                  {8, 16, 256}}));
  const Topology t = torus_2d(rows, cols);
  INFO(rows << "x" << cols);
  CHECK(t.gpu_count() == rows * cols);
  CHECK(static_cast<int>(t.links().size()) == links);
  CHECK(t.node_count() == 1);
  for (const Link& l : t.links()) CHECK(l.bandwidth_gbps == 50.0);
  CHECK(load_topology("torus-4x4-100").links()[0].bandwidth_gbps == 100.0);
  CHECK(load_topology("torus-3x5").gpu_count() == 15);
  CHECK_THROWS_AS(load_topology("torus-0x4"), twinccl::ConfigError);
  CHECK_THROWS_AS(load_topology("torus-4x4-0"), twinccl::ConfigError);
}

TEST_CASE("unknown preset lists the presets", "[topologies][presets]") {
  CHECK_THROWS_AS(load_topology("dgx-z9000"), twinccl::ConfigError);
  CHECK_THROWS_WITH(load_topology("dgx-z9000"), Contains("dgx-z9000") && Contains("dgx-h100") &&
                                                    Contains("h100-cluster-N") &&
                                                    Contains("torus-RxC"));
  CHECK_THROWS_WITH(load_topology("missing-file.json"), Contains("missing-file.json"));
  CHECK_THROWS_WITH(load_topology("missing-file.xml"), Contains("missing-file.xml"));
}
