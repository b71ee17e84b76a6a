// `twinccl topo show P --format json` then `--topology x.json` must be P itself: for every preset
// `topo list` names (several node counts where the name takes N) and for edited ones, the JSON
// writer (to_json) and the reader give back every vertex, link and fact bit for bit, the same
// routes, and the same `topo show` / `topo check` text.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "support/preset_names.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/limits.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl::topo;

namespace {

// Bit for bit: == on doubles, and the sign of a zero (a "-0.0" written as "0" would differ).
bool same_double(double a, double b) { return a == b && std::signbit(a) == std::signbit(b); }

// Every field of every vertex and link and every fact: what perf, compare and replay read.
// Returns the first difference ("" = none), so one preset's failure names the field.
std::string first_difference(const Topology& a, const Topology& b) {
  if (a.name() != b.name()) return "name " + a.name() + " vs " + b.name();
  if (a.description() != b.description()) return "description";
  const TopologyFacts &f = a.facts(), &g = b.facts();
  if (f.arch != g.arch) return "arch";
  if (f.pcie_gen != g.pcie_gen) return "pcie_gen";
  if (f.nvls != g.nvls) return "nvls";
  if (!same_double(f.memory_gbps, g.memory_gbps)) return "memory_gbps";
  if (f.network != g.network) return "network";
  if (f.host_cpu != g.host_cpu) return "host_cpu";
  if (!same_double(f.host_launch_us, g.host_launch_us)) return "host_launch_us";
  if (!same_double(f.group_launch_us, g.group_launch_us)) return "group_launch_us";
  if (!same_double(f.network_hop_extra_us, g.network_hop_extra_us)) return "network_hop_extra_us";
  if (!same_double(f.nic_delivered_share, g.nic_delivered_share)) return "nic_delivered_share";
  if (f.nic_ports != g.nic_ports) return "nic_ports";
  if (!same_double(f.p2p_net_chunk_bytes, g.p2p_net_chunk_bytes)) return "p2p_net_chunk_bytes";
  if (!same_double(f.nccl_buffsize_bytes, g.nccl_buffsize_bytes)) return "nccl_buffsize_bytes";
  if (a.vertices().size() != b.vertices().size()) return "vertex count";
  if (a.links().size() != b.links().size()) return "link count";
  for (std::size_t i = 0; i < a.vertices().size(); ++i) {
    const Vertex &x = a.vertices()[i], &y = b.vertices()[i];
    if (x.name != y.name || x.kind != y.kind || x.node != y.node || x.rank != y.rank ||
        x.local_index != y.local_index || x.forwards != y.forwards ||
        x.physical_switches != y.physical_switches || x.level != y.level || x.radix != y.radix ||
        !same_double(x.port_bandwidth_gbps, y.port_bandwidth_gbps)) {
      return "vertex " + x.name;
    }
  }
  for (std::size_t i = 0; i < a.links().size(); ++i) {
    const Link &x = a.links()[i], &y = b.links()[i];
    if (x.a != y.a || x.b != y.b || x.type != y.type ||
        !same_double(x.bandwidth_gbps, y.bandwidth_gbps) ||
        !same_double(x.latency_us, y.latency_us) || x.duplex != y.duplex ||
        x.sharing != y.sharing || x.lanes != y.lanes) {
      return "link " + std::to_string(i) + " (" + a.vertex(x.a).name + "<->" + a.vertex(x.b).name +
             ")";
    }
  }
  for (int r = 0; r < a.gpu_count(); ++r) {
    if (a.route(0, r) != b.route(0, r)) return "route 0->" + std::to_string(r);
    if (a.route(r, 0) != b.route(r, 0)) return "route " + std::to_string(r) + "->0";
    if (a.home_nic(r) != b.home_nic(r)) return "home NIC of rank " + std::to_string(r);
  }
  if (describe(a) != describe(b)) return "topo show text";
  if (draw_node(a, 0) != draw_node(b, 0)) return "topo show drawing";
  if (check_report(a) != check_report(b)) return "topo check text";
  return "";
}

void check_round_trip(const Topology& t, const std::string& label) {
  INFO(label);
  const std::string text = to_json(t);
  const Topology back = topology_from_json(text, label + ".json");
  CHECK(first_difference(t, back) == "");
  CHECK(to_json(back) == text);  // and a second save gives the same file
}

}  // namespace

TEST_CASE("every preset survives topo show --format json and --topology x.json bit for bit",
          "[topologies][json]") {
  const std::vector<std::string> names = twinccl_test::every_preset_name();
  REQUIRE(names.size() >= list_presets().size());
  for (const std::string& name : names) check_round_trip(load_topology(name), name);
}

TEST_CASE("edited presets keep every edit and fact through the JSON file", "[topologies][json]") {
  struct Case {
    const char* preset;
    std::vector<const char*> settings;
    std::vector<Fault> faults;
  };
  const std::vector<Case> cases = {
      // Every fact --set reaches, at values with no short decimal form.
      {"aws-p5-2",
       {"host_launch_us=7.123456789012345", "group_launch_us=4.1", "network_hop_extra_us=-0.3",
        "p2p_net_chunk_bytes=524288", "nccl_buffsize_bytes=8388608", "nic_gbps=33.333333333",
        "nic_delivered_share=0.958614258577635"},
       {}},
      {"dgx-h100", {"nvls=0", "nvlink_gbps=123.456", "pcie_latency_us=0.1"}, {}},
      {"gcp-a3mega-2", {"nodes=1"}, {}},
      {"dgx-b200", {"nodes=3", "oversubscription=3", "network_latency_us=2.2"}, {}},
      {"h100-cluster-2",
       {"nics_per_node=4"},
       {parse_fault(FaultKind::fail, "nic1@node1"), parse_fault(FaultKind::degrade, "spine0=33%")}},
      {"mi300x-roce-2", {"host_launch_us=0.1"}, {}},
      {"h100-cluster-2", {"nic_ports=2"}, {}},
  };
  for (const Case& c : cases) {
    TopologyEdits edits;
    for (const char* s : c.settings) edits.settings.push_back(parse_setting(s));
    edits.faults = c.faults;
    const EditedTopology edited = apply_edits(load_topology(c.preset), edits);
    check_round_trip(edited.topology, edited.topology.name());
  }
}

TEST_CASE("a description longer than the reader takes is cut so the written file loads",
          "[topologies][json]") {
  // An imported NCCL XML's description names its path; the reader caps descriptions at 4096 bytes.
  const Topology t = load_topology("pcie-4gpu");
  TopologyBuilder b(t.name());
  b.description(std::string(5000, 'd')).arch(t.facts().arch).pcie_gen(t.facts().pcie_gen);
  for (const Vertex& v : t.vertices()) {
    b.add_vertex({.kind = v.kind, .name = v.name, .node = v.node, .rank = v.rank});
  }
  for (const Link& l : t.links()) {
    b.connect(l.a, l.b,
              {.type = l.type,
               .bandwidth_gbps = l.bandwidth_gbps,
               .latency_us = l.latency_us,
               .lanes = l.lanes});
  }
  const Topology long_text = b.seal();
  const Topology back = topology_from_json(to_json(long_text), "long.json");
  CHECK(back.description().size() == limits::max_description_bytes);
  CHECK(back.description().substr(back.description().size() - 4) == "d...");
  CHECK(back.links().size() == t.links().size());
}
