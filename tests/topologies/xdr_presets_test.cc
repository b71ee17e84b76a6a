// DGX B300 on InfiniBand XDR (issue 24, "InfiniBand NDR/XDR"): dgx-b300 and b300-cluster-N pass
// `topo check` with no warning and have the counts topologies/presets/dgx_b300.cc cites: DGX
// B200's NVLink 5 node with one 800G ConnectX-8 per GPU on a PCIe gen6 path; and the check that
// names a NIC faster than the PCIe link feeding it.
#include <catch2/catch.hpp>

#include "twinccl/errors.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

TEST_CASE("XDR presets pass topo check without warnings and draw", "[topologies][presets]") {
  const std::string name = GENERATE("dgx-b300", "b300-cluster-2", "b300x3");
  INFO(name);
  const Topology t = load_topology(name);
  CHECK_THAT(check_report(t), Contains(": OK (") && Contains("warnings: 0"));
  CHECK_THAT(draw_node(t, 0), Contains("gpu"));
  for (int r = 0; r < t.gpu_count(); ++r) CHECK(t.vertex(t.gpu(r)).rank == r);
}

TEST_CASE("dgx-b300: dgx-b200's NVLink 5 node, 8 x 800G NICs on PCIe gen6",
          "[topologies][presets]") {
  const TopologySummary s = dgx_b300().summary();
  const TopologySummary b200 = dgx_b200().summary();
  CHECK(s.name == "dgx-b300");
  CHECK(s.arch == GpuArch::blackwell);
  CHECK(s.gpus == 8);
  CHECK(s.nvls_capable);
  CHECK(s.nvlink_bandwidth_gbps == Approx(721.8));
  CHECK(s.nics_per_node == 8);
  CHECK(s.nic_bandwidth_gbps == Approx(100.0));  // ConnectX-8, 800 Gb/s
  CHECK(s.nic_bandwidth_gbps == 2.0 * b200.nic_bandwidth_gbps);
  CHECK(s.pcie_bandwidth_gbps == Approx(96.0));  // gen6 x16 in NCCL's table
  CHECK(s.network == NetworkClass::infiniband);
  CHECK(s.vertices == b200.vertices);
  CHECK(s.links == b200.links);
  CHECK_THAT(dgx_b300().description(), Contains("800G") && Contains("XDR"));
}

TEST_CASE("b300-cluster-N: N DGX B300 on 800G rails, N outside 1..1024 refused",
          "[topologies][presets]") {
  const Topology t = b300_cluster(4);
  const TopologySummary s = t.summary();
  CHECK(t.name() == "b300-cluster-4");
  CHECK(s.nodes == 4);
  CHECK(s.gpus == 32);
  CHECK(s.nic_bandwidth_gbps == Approx(100.0));
  CHECK_THAT(t.description(), Contains("DGX B300") && Contains("800G XDR"));
  CHECK(load_topology("b300x4").summary().gpus == 32);
  CHECK_THROWS_WITH(b300_cluster(0), Contains("b300-cluster-N") && Contains("got 0"));
  CHECK_THROWS_AS(b300_cluster(1025), twinccl::ConfigError);
}

// The what-if a user tries first: 800G NICs on a gen5 node. The route still runs at the 48 GB/s
// PCIe link, so `topo check` says why; with a gen6 path (dgx-b300's) the warning goes.
TEST_CASE("topo check names a NIC faster than its PCIe link (800G on gen5)",
          "[topologies][presets]") {
  TopologyEdits fast_nic;
  fast_nic.settings.push_back(parse_setting("nic_gbps=100"));
  const Topology gen5 = apply_edits(load_topology("b200-cluster-2"), fast_nic).topology;
  const std::string report = check_report(gen5);
  CHECK_THAT(report, Contains("16 NICs run at most at their PCIe link: 100 GB/s ports behind "
                              "48 GB/s PCIe links") &&
                         Contains("--set pcie_gbps=N") && Contains("slowest link 48 GB/s"));
  TopologyEdits gen6 = fast_nic;
  gen6.settings.push_back(parse_setting("pcie_gbps=96"));
  const Topology fed = apply_edits(load_topology("b200-cluster-2"), gen6).topology;
  CHECK_THAT(check_report(fed), Contains("warnings: 0"));
}
