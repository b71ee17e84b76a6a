// `--set nodes=N` above a multi-node topology's own count (topologies/src/topology_regrow.h): the
// family's preset at N nodes with the settings the topology's name records, so a file fitted on 2
// nodes (a saved edited topology, as `twinccl calibrate` writes one) predicts 16; refused, naming
// why, when the name does not rebuild the topology.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {

EditedTopology edit(const Topology& t, std::vector<std::string> sets,
                    std::vector<std::string> fails = {}) {
  TopologyEdits e;
  for (const std::string& s : sets) e.settings.push_back(parse_setting(s));
  for (const std::string& f : fails) e.faults.push_back(parse_fault(FaultKind::fail, f));
  return apply_edits(t, e);
}

// Every vertex and link of `a` as in `b`: names, kinds, ends, rates, latencies.
void check_same_parts(const Topology& a, const Topology& b) {
  REQUIRE(a.vertices().size() == b.vertices().size());
  REQUIRE(a.links().size() == b.links().size());
  for (std::size_t i = 0; i < a.vertices().size(); ++i) {
    CHECK(a.vertices()[i].name == b.vertices()[i].name);
    CHECK(a.vertices()[i].port_bandwidth_gbps == Approx(b.vertices()[i].port_bandwidth_gbps));
  }
  for (std::size_t i = 0; i < a.links().size(); ++i) {
    CHECK(a.links()[i].a == b.links()[i].a);
    CHECK(a.links()[i].b == b.links()[i].b);
    CHECK(a.links()[i].bandwidth_gbps == Approx(b.links()[i].bandwidth_gbps));
    CHECK(a.links()[i].latency_us == Approx(b.links()[i].latency_us));
  }
  CHECK(a.facts().network == b.facts().network);
  CHECK(a.facts().host_cpu == b.facts().host_cpu);
  CHECK(a.facts().nic_delivered_share == Approx(b.facts().nic_delivered_share));
}

// `t` written to a topology file (its first `from` replaced by `to`, a hand edit) and read back,
// as a user's `-o my.json` is.
Topology saved_and_loaded(const Topology& t, const std::string& file, const std::string& from = "",
                          const std::string& to = "") {
  const auto path = std::filesystem::temp_directory_path() / file;
  std::string text = to_json(t);
  if (!from.empty()) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  std::ofstream(path) << text;
  Topology back = load_topology_json(path);
  std::filesystem::remove(path);
  return back;
}

}  // namespace

TEST_CASE("a multi-node preset grows to its family's preset at that size", "[topologies][whatif]") {
  const EditedTopology e = edit(h100_cluster(2), {"nodes=8"});
  check_same_parts(e.topology, load_topology("h100-cluster-8"));
  REQUIRE(e.notes.size() == 1);
  CHECK_THAT(e.notes[0], Contains("h100-cluster-8 (this family at 8 nodes)"));
}

TEST_CASE("a topology file fitted on 2 nodes grows with the settings its name records",
          "[topologies][whatif]") {
  const Topology fitted =
      edit(load_topology("aws-p5-2"), {"nic_gbps=25", "nic_delivered_share=0.9"}).topology;
  const Topology file = saved_and_loaded(fitted, "twinccl-regrow-fitted.json");
  const EditedTopology grown = edit(file, {"nodes=16"});
  check_same_parts(
      grown.topology,
      edit(load_topology("aws-p5-16"), {"nic_gbps=25", "nic_delivered_share=0.9"}).topology);
  CHECK(grown.topology.node_count() == 16);
  CHECK(grown.topology.facts().network == NetworkClass::efa);
  REQUIRE(grown.notes.size() == 1);
  CHECK_THAT(grown.notes[0], Contains("aws-p5-16") && Contains("nic_gbps=25") &&
                                 Contains("carried from 2 to 16 nodes") &&
                                 Contains("--scale-trend"));
  // Grown again from the grown one (its name now records nodes=16 too), and lowered as before.
  CHECK(edit(grown.topology, {"nodes=32"}).topology.node_count() == 32);
  CHECK(edit(file, {"nodes=1"}).topology.node_count() == 1);
}

TEST_CASE("growth the name cannot rebuild is refused, naming why", "[topologies][whatif]") {
  const Topology fitted = edit(load_topology("aws-p5-2"), {"nic_gbps=25"}).topology;
  // A file whose first NIC link was edited by hand: its name no longer says what it is.
  const Topology by_hand = saved_and_loaded(fitted, "twinccl-regrow-by-hand.json",
                                            "\"bandwidth_gbps\":25.0", "\"bandwidth_gbps\":20.0");
  CHECK_THROWS_WITH(edit(by_hand, {"nodes=4"}), Contains("cannot grow") &&
                                                    Contains("edited by hand") &&
                                                    Contains("name a larger topology (aws-p5-4)"));
  // A fault names parts of the 2-node topology.
  const Topology failed = edit(h100_cluster(2), {}, {"nic3@node1"}).topology;
  CHECK_THROWS_WITH(edit(failed, {"nodes=4"}), Contains("records a fault"));
  // No family: a topology of its own name.
  const Topology own = saved_and_loaded(load_topology("aws-p5-2"), "twinccl-regrow-own.json",
                                        "\"name\": \"aws-p5-2\"", "\"name\": \"my-cluster\"");
  CHECK_THROWS_WITH(edit(own, {"nodes=4"}), Contains("names no preset family"));
}

TEST_CASE("a share trend is a file fact: written, read back, carried when the file grows",
          "[topologies][whatif]") {
  const Topology fitted =
      edit(load_topology("aws-p5-2"), {"nic_delivered_share=0.9", "nic_share_per_doubling=-0.05"})
          .topology;
  CHECK(fitted.facts().nic_share_nodes == 2);  // from the topology as given
  CHECK_THAT(to_json(fitted),
             Contains("\"nic_share_per_doubling\": -0.05") && Contains("\"nic_share_nodes\": 2"));
  const Topology file = saved_and_loaded(fitted, "twinccl-regrow-trend.json");
  CHECK(file.facts().nic_share_per_doubling == -0.05);
  const EditedTopology grown = edit(file, {"nodes=8"});
  CHECK(grown.topology.facts().nic_share_nodes == 2);
  CHECK(grown.topology.facts().nic_delivered_share == 0.9);
  CHECK(nic_share_trend_factor(grown.topology.facts(), 8) == Approx(0.95 * 0.95));
  CHECK_THAT(grown.notes[0], Contains("follows the trend it holds (-5.0% per doubling from 2 "
                                      "nodes: x 0.902 at 8)"));
  // A trend without the node count it starts from, or beyond +-50% a doubling, is refused.
  CHECK_THROWS_WITH(saved_and_loaded(fitted, "twinccl-regrow-trend-bad.json",
                                     "\"nic_share_nodes\": 2", "\"nic_share_nodes\": 0"),
                    Contains("nic_share_per_doubling must be within +-0.5") &&
                        Contains("the node count it starts from"));
  CHECK_THROWS_WITH(parse_setting("nic_share_per_doubling=-0.6"), Contains("must be in -0.5..0.5"));
}
