// What-if edits given twice or mixed have one documented meaning (topology_edit.h, docs/whatif.md):
// a name set twice takes the last value, for every name alike (before: nvlink_gbps took the last,
// nics_per_node kept the first, nodes was an error); faults apply in the order given, --degrade
// and --fail mixed (before: every degrade ran before every fail, so a degrade of a failed part
// passed); a part failed twice stays failed (before: "no part" for the second --fail).
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {

EditedTopology edit(const Topology& t, const std::vector<std::string>& sets,
                    const std::vector<std::pair<FaultKind, std::string>>& faults = {}) {
  TopologyEdits e;
  for (const std::string& s : sets) e.settings.push_back(parse_setting(s));
  for (const auto& [kind, text] : faults) e.faults.push_back(parse_fault(kind, text));
  return apply_edits(t, e);
}

std::string all_notes(const EditedTopology& e) {
  std::string out;
  for (const std::string& n : e.notes) out += n + "\n";
  return out;
}

}  // namespace

TEST_CASE("a name set twice: the last value wins, for every name", "[topologies][whatif]") {
  const Topology cluster = h100_cluster(2);
  const EditedTopology nvlink = edit(dgx_h100(), {"nvlink_gbps=100", "nvlink_gbps=200"});
  CHECK(nvlink.topology.summary().nvlink_bandwidth_gbps == 200.0);
  CHECK(nvlink.topology.name() == "dgx-h100+nvlink_gbps=200");
  CHECK(edit(cluster, {"nics_per_node=4", "nics_per_node=8"}).topology.summary().nics_per_node ==
        8);
  CHECK(edit(cluster, {"nics_per_node=8", "nics_per_node=4"}).topology.summary().nics_per_node ==
        4);
  CHECK(edit(dgx_h100(), {"nodes=2", "nodes=4"}).topology.node_count() == 4);
  CHECK(edit(dgx_h100(), {"nodes=4", "nodes=2"}).topology.node_count() == 2);
  // The name says what was applied: the last value only.
  CHECK_THAT(edit(dgx_h100(), {"nodes=2", "nodes=4"}).topology.name(), !Contains("nodes=2"));
}

TEST_CASE("faults apply in the order given", "[topologies][whatif]") {
  const Topology cluster = h100_cluster(2);
  SECTION("a degrade after a fail of the same part is refused, naming the part") {
    CHECK_THROWS_AS(
        edit(cluster, {}, {{FaultKind::fail, "n1.nic3"}, {FaultKind::degrade, "n1.nic3=50%"}}),
        twinccl::InvalidArgument);
    CHECK_THROWS_WITH(
        edit(cluster, {}, {{FaultKind::fail, "n1.nic3"}, {FaultKind::degrade, "n1.nic3=50%"}}),
        Contains("--degrade n1.nic3=50%") && Contains("'n1.nic3' is gone") &&
            Contains("earlier --fail"));
  }
  SECTION("a degrade before a fail: the part is degraded, then failed") {
    const EditedTopology e =
        edit(cluster, {}, {{FaultKind::degrade, "n1.nic3=50%"}, {FaultKind::fail, "n1.nic3"}});
    CHECK_FALSE(e.topology.find("n1.nic3").has_value());
  }
  SECTION("a part failed twice (two spellings) stays failed, with a note") {
    const EditedTopology e =
        edit(cluster, {}, {{FaultKind::fail, "nic3@node1"}, {FaultKind::fail, "n1.nic3"}});
    CHECK_FALSE(e.topology.find("n1.nic3").has_value());
    CHECK(e.topology.summary().nics_per_node == 7);
    CHECK_THAT(all_notes(e), Contains("n1.nic3 is already gone"));
  }
}

TEST_CASE("an edited topology edited again keeps a name within the cap", "[topologies][whatif]") {
  // Each edit adds "+LABEL" (up to ~184 bytes): before, the third edit of a saved file was refused
  // with "name longer than 256 bytes".
  Topology t = h100_cluster(2);
  for (int round = 0; round < 4; ++round) {
    t = edit(t, {"nic_gbps=" + std::to_string(100 + round), "nvlink_gbps=123.456789",
                 "pcie_gbps=23.456789", "network_hop_extra_us=1.23456789", "nics_per_node=8",
                 "host_launch_us=4.56789", "group_launch_us=1.23456789"})
            .topology;
    CHECK(t.name().size() <= 256);
    CHECK(t.name().rfind("h100-cluster-2+", 0) == 0);
    // The newest edit stays in the name (cut in the middle; before: the end was cut off).
    CHECK_THAT(t.name(), Contains("+nic_gbps=" + std::to_string(100 + round) + ",") &&
                             Catch::EndsWith("group_launch_us=1.23456789"));
    CHECK(t.description().size() <= 4096);
  }
  CHECK(t.summary().nic_bandwidth_gbps == 103.0);
}

TEST_CASE("an edited topology's description says it was edited, and how", "[topologies][whatif]") {
  // Before: "8 x 400G NICs" kept after nic_gbps=25, and written so into a saved file.
  const Topology preset = dgx_h100();
  const Topology t = edit(preset, {"nic_gbps=25"}, {{FaultKind::fail, "nic3@node0"}}).topology;
  CHECK(t.description() == preset.description() + "; edited: nic_gbps=25,fail:nic3@node0");
  // Edited again and again: within the reader's cap, the newest edit at its end.
  Topology again = t;
  for (int round = 1; round <= 80; ++round) {
    again = edit(again, {"nic_gbps=" + std::to_string(round), "host_launch_us=4.56789",
                         "group_launch_us=1.23456789"})
                .topology;
  }
  CHECK(again.description().size() <= 4096);
  CHECK(again.description().rfind(preset.description(), 0) == 0);
  CHECK_THAT(
      again.description(),
      Catch::EndsWith("; edited: nic_gbps=80,host_launch_us=4.56789,group_launch_us=1.23456789"));
}
