// What-if edits (topology_edit.h): each parameter and fault changes the figures the models read
// in the expected direction, routes avoid failed parts and say so, and every bad input is an
// InvalidArgument that names the flag and lists what is allowed.
#include "twinccl/topologies/topology_edit.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {

EditedTopology edit(const Topology& t, std::vector<std::string> sets,
                    std::vector<std::string> degrades = {}, std::vector<std::string> fails = {}) {
  TopologyEdits e;
  for (const std::string& s : sets) e.settings.push_back(parse_setting(s));
  for (const std::string& d : degrades) e.faults.push_back(parse_fault(FaultKind::degrade, d));
  for (const std::string& f : fails) e.faults.push_back(parse_fault(FaultKind::fail, f));
  return apply_edits(t, e);
}

std::vector<std::string> route_names(const Topology& t, int a, int b) {
  std::vector<std::string> out;
  for (VertexId v : t.route_vertices(a, b)) out.push_back(t.vertex(v).name);
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::string all_notes(const EditedTopology& e) {
  std::string out;
  for (const std::string& n : e.notes) out += n + "\n";
  return out;
}

}  // namespace

TEST_CASE("no edits: the same topology", "[topologies][whatif]") {
  const Topology t = dgx_h100();
  const EditedTopology e = apply_edits(t, {});
  CHECK(e.topology.name() == "dgx-h100");
  CHECK(e.notes.empty());
}

TEST_CASE("link rates move the summary the analytic model reads", "[topologies][whatif]") {
  const Topology h100 = dgx_h100();
  const double nvlink = h100.summary().nvlink_bandwidth_gbps;
  CHECK(edit(h100, {"nvlink_gbps=600"}).topology.summary().nvlink_bandwidth_gbps == 600.0);
  CHECK(edit(h100, {"nvlink_gbps=600"}).topology.summary().nvlink_bandwidth_gbps > nvlink);
  CHECK(edit(h100, {"pcie_gbps=24"}).topology.summary().pcie_bandwidth_gbps == 24.0);
  const Topology cluster = h100_cluster(2);
  const TopologySummary s = edit(cluster, {"nic_gbps=25"}).topology.summary();
  CHECK(s.nic_bandwidth_gbps == 25.0);
  CHECK(s.nic_bandwidth_gbps < cluster.summary().nic_bandwidth_gbps);
  // The NIC's uplink follows, so the flow model sees it too.
  const Topology slow = edit(cluster, {"nic_gbps=25"}).topology;
  CHECK(measure(slow, slow.route(0, 8)).bottleneck_bandwidth_gbps == 25.0);
  CHECK(edit(h100, {"nvlink_gbps=600"}).topology.name() == "dgx-h100+nvlink_gbps=600");
}

TEST_CASE("latencies, oversubscription and fabric rates reach the links", "[topologies][whatif]") {
  const Topology cluster = h100_cluster(2);
  const Topology slow = edit(cluster, {"network_latency_us=5"}).topology;
  CHECK(measure(slow, slow.route(0, 8)).latency_us >
        measure(cluster, cluster.route(0, 8)).latency_us);
  const EditedTopology over = edit(cluster, {"oversubscription=4"});
  for (const Link& l : over.topology.links()) {
    const bool fabric = over.topology.vertex(l.a).kind == VertexKind::network_switch &&
                        over.topology.vertex(l.b).kind == VertexKind::network_switch;
    CHECK(l.bandwidth_gbps == (fabric ? 12.5 : l.bandwidth_gbps));
  }
  CHECK_THAT(all_notes(over), Contains("only --fidelity flow sees it"));
  CHECK_THROWS_WITH(edit(dgx_h100(), {"oversubscription=2"}), Contains("no link between two"));
  CHECK_THROWS_WITH(edit(pcie_4gpu(), {"nic_gbps=10"}), Contains("has no NIC"));
}

TEST_CASE("nodes and nics_per_node change the shape", "[topologies][whatif]") {
  const Topology four = edit(dgx_h100(), {"nodes=4"}).topology;
  CHECK(four.node_count() == 4);
  CHECK(four.gpu_count() == 32);
  const Topology one = edit(h100_cluster(2), {"nodes=1"}).topology;
  CHECK(one.node_count() == 1);
  CHECK(one.gpu_count() == 8);
  CHECK(edit(h100_cluster(2), {"nodes=8"}).topology.node_count() == 8);  // topology_regrow_test.cc
  CHECK(edit(h100_cluster(2), {"nics_per_node=4"}).topology.summary().nics_per_node == 4);
  CHECK_THROWS_WITH(edit(h100_cluster(2), {"nics_per_node=9"}), Contains("at most 8 NICs"));
}

TEST_CASE("a failed NIC: routes avoid it, the notes say where traffic moved",
          "[topologies][whatif]") {
  const Topology cluster = h100_cluster(2);
  REQUIRE(contains(route_names(cluster, 11, 3), "n1.nic3"));
  const EditedTopology e = edit(cluster, {}, {}, {"nic3@node1"});
  const std::vector<std::string> r = route_names(e.topology, 11, 3);
  CHECK_FALSE(contains(r, "n1.nic3"));
  CHECK(contains(r, "n1.nic2"));
  CHECK(e.topology.vertex(*e.topology.home_nic(11)).name == "n1.nic2");
  CHECK(e.topology.summary().nics_per_node == 7);  // the fewest of any node, not node 0's 8
  // GPU 7 keeps NIC 7: rails go by the NIC's local index, not by how many NICs are left.
  CHECK(e.topology.vertex(*e.topology.home_nic(15)).name == "n1.nic7");
  CHECK_THAT(all_notes(e), Contains("n1.gpu3 through n1.nic2 (was n1.nic3)"));
  CHECK_THAT(all_notes(e), Contains("routes avoid it"));
  // The vertex name works as well as NAME@nodeN.
  CHECK(edit(cluster, {}, {}, {"n1.nic3"}).topology.summary().nics_per_node == 7);
}

TEST_CASE("a failed link or leaf removes the NICs it cut off", "[topologies][whatif]") {
  const Topology cluster = h100_cluster(2);
  const EditedTopology link = edit(cluster, {}, {}, {"n1.nic3<->leaf.su0.r3"});
  CHECK_FALSE(link.topology.find("n1.nic3").has_value());
  CHECK_THAT(all_notes(link), Contains("lost every network link"));
  const EditedTopology leaf = edit(cluster, {}, {}, {"leaf.su0.r5"});
  CHECK_FALSE(leaf.topology.find("n0.nic5").has_value());
  CHECK_FALSE(leaf.topology.find("n1.nic5").has_value());
  // A spine is not seen by the analytic figures: the notes say so.
  CHECK_THAT(all_notes(edit(cluster, {}, {}, {"spine0"})), Contains("does not see these faults"));
}

TEST_CASE("degraded parts and a slow GPU", "[topologies][whatif]") {
  const Topology cluster = h100_cluster(2);
  const EditedTopology nic = edit(cluster, {}, {"nic3@node1=25%"});
  CHECK(nic.topology.summary().nic_bandwidth_gbps == Approx(12.5));
  const Topology& t = nic.topology;
  CHECK(measure(t, t.route(11, 3)).bottleneck_bandwidth_gbps == Approx(12.5));
  const EditedTopology gpu = edit(dgx_h100(), {}, {"gpu2=0.5"});
  CHECK(gpu.topology.summary().nvlink_bandwidth_gbps ==
        Approx(dgx_h100().summary().nvlink_bandwidth_gbps / 2));
  CHECK_THAT(all_notes(gpu), Contains("slow GPU"));
  REQUIRE(gpu.gpu_speed.size() == 8);  // a replay computes rank 2 at half speed
  CHECK(gpu.gpu_speed[2] == 0.5);
  CHECK(gpu.gpu_speed[3] == 1.0);
  CHECK(nic.gpu_speed.empty());
  const Topology link = edit(cluster, {}, {"n0.gpu0<->n0.nvswitch=50%"}).topology;
  CHECK(measure(link, link.route(0, 1)).bottleneck_bandwidth_gbps ==
        Approx(cluster.summary().nvlink_bandwidth_gbps / 2));
}

TEST_CASE("faults that cannot be: clear errors naming the part", "[topologies][whatif]") {
  const Topology cluster = h100_cluster(2);
  CHECK_THROWS_AS(edit(cluster, {}, {}, {"nic9@node1"}), twinccl::InvalidArgument);
  CHECK_THROWS_WITH(edit(cluster, {}, {}, {"nic9@node1"}),
                    Contains("no part 'nic9@node1'") && Contains("n0.nic0 .. n1.nic7"));
  CHECK_THROWS_WITH(edit(cluster, {}, {}, {"gpu3@node0"}), Contains("a GPU cannot fail"));
  CHECK_THROWS_WITH(edit(cluster, {}, {}, {"n0.gpu0<->n1.gpu0"}), Contains("no link joins"));
  // Every NIC of node 1 gone: no path to node 0 remains.
  std::vector<std::string> all;
  for (int i = 0; i < 8; ++i) all.push_back("nic" + std::to_string(i) + "@node1");
  CHECK_THROWS_WITH(edit(cluster, {}, {}, all), Contains("after --fail nic0@node1"));
}

TEST_CASE("unknown parameters and impossible values list what can be set", "[topologies][whatif]") {
  CHECK_THROWS_AS(parse_setting("nvlnk_gbps=600"), twinccl::InvalidArgument);
  CHECK_THROWS_WITH(parse_setting("nvlnk_gbps=600"),
                    Contains("unknown parameter 'nvlnk_gbps'") && Contains("nvlink_gbps") &&
                        Contains("nic_gbps") && Contains("oversubscription"));
  CHECK_THROWS_WITH(parse_setting("nvlink_gbps"), Contains("expected NAME=VALUE"));
  CHECK_THROWS_WITH(parse_setting("nvlink_gbps=-5"), Contains("must be in"));
  CHECK_THROWS_WITH(parse_setting("nvlink_gbps=fast"), Contains("takes a number"));
  CHECK_THROWS_WITH(parse_setting("nvlink_gbps=nan"), Contains("takes a number"));
  CHECK_THROWS_WITH(parse_setting("nodes=1.5"), Contains("a whole number"));
  CHECK_THROWS_WITH(parse_setting("nodes=0"), Contains("must be in 1..1024"));
  CHECK_THROWS_WITH(parse_setting("oversubscription=0.5"), Contains("must be in 1..1024"));
  // Exact numbers (was "must be in 0..1.07374e+09, got 1.07374e+09").
  CHECK_THROWS_WITH(parse_setting("nccl_buffsize_bytes=1073741825"),
                    Contains("must be in 0..1073741824, got 1073741825"));
  CHECK(parse_setting("nic_gbps=25").value == 25.0);
  CHECK(parse_fault(FaultKind::degrade, "nic3@node5=25%").speed_fraction == 0.25);
  CHECK(parse_fault(FaultKind::degrade, "nic3@node5=0.5").speed_fraction == 0.5);
  CHECK_THROWS_WITH(parse_fault(FaultKind::degrade, "nic3@node5=0%"), Contains("--fail PART"));
  CHECK_THROWS_WITH(parse_fault(FaultKind::degrade, "nic3@node5=150%"), Contains("(0%, 100%]"));
  CHECK_THROWS_WITH(parse_fault(FaultKind::degrade, "nic3@node5"), Contains("PART=RATE"));
  CHECK_THROWS_WITH(parse_fault(FaultKind::fail, "nic3=1"), Contains("no '='"));
  CHECK(settable_parameters().size() >= 14);
}

TEST_CASE("set nvls=0 turns NVLS off as NCCL_NVLS_ENABLE=0 and nvls=1 needs an NVSwitch",
          "[topologies][whatif]") {
  CHECK(dgx_h100().summary().nvls_capable);
  const EditedTopology off = edit(dgx_h100(), {"nvls=0"});
  CHECK_FALSE(off.topology.summary().nvls_capable);
  CHECK(off.topology.gpu_count() == 8);
  CHECK(edit(off.topology, {"nvls=1"}).topology.summary().nvls_capable);
  CHECK_FALSE(edit(gb200_nvl72_cluster(2), {"nvls=0"}).topology.summary().nvls_capable);
  CHECK_THROWS_WITH(edit(mi300x_8(), {"nvls=1"}),
                    Contains("mi300x-8 cannot run NVLS") && Contains("cdna3"));
  CHECK_THROWS_WITH(edit(dgx_h100(), {"nvls=2"}), Contains("0..1"));
  CHECK_THROWS_WITH(edit(dgx_h100(), {"nvls=0.5"}), Contains("nvls"));
}

TEST_CASE("a failed NVSwitch: NVLS is off when no NVSwitch is left, not a validation error",
          "[topologies][whatif]") {
  // Used to end in "nvls is true but there is no nvswitch vertex" (the preset's NVLS fact).
  const EditedTopology e = edit(dgx_h100(), {}, {}, {"nvswitch"});
  CHECK_FALSE(e.topology.find("nvswitch").has_value());
  CHECK_FALSE(e.topology.summary().nvls_capable);
  CHECK(e.topology.gpu_count() == 8);
  CHECK_THAT(all_notes(e), Contains("no NVSwitch is left"));
  // One node's switch of two: the other node's stays, and so does the NVLS fact.
  const EditedTopology one = edit(h100_cluster(2), {}, {}, {"n0.nvswitch"});
  CHECK(one.topology.find("n1.nvswitch").has_value());
  CHECK_THAT(all_notes(one), !Contains("no NVSwitch is left"));
}
