// `--set host_cpu=NAME` and `--set network=CLASS`: topology facts named, not numbers (the hosts'
// CPU, which NCCL prices in a multi-node ring's network post, LL's multi-node cap and Blackwell's
// NVLS-tree correction; the scale-out network's class, which sets a network hop's cost and the net
// plugin's), set by name as a topology file sets them; every other name is refused listing the
// ones there are, which are the file's spellings (topology.h host_cpu_names, network_class_names).
#include <catch2/catch.hpp>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {

EditedTopology with(const Topology& t, const std::string& setting) {
  TopologyEdits e;
  e.settings.push_back(parse_setting(setting));
  return apply_edits(t, e);
}

}  // namespace

TEST_CASE("set host_cpu: by name, in the edited topology's facts and its label",
          "[topologies][whatif]") {
  const Topology amd = load_topology("mi300x-roce-2");
  REQUIRE(amd.facts().host_cpu == HostCpu::x86_amd);
  const EditedTopology intel = with(amd, "host_cpu=x86");
  CHECK(intel.topology.facts().host_cpu == HostCpu::x86);
  CHECK_THAT(intel.topology.name(), Contains("host_cpu=x86"));
  CHECK(with(intel.topology, "host_cpu=x86-amd").topology.facts().host_cpu == HostCpu::x86_amd);
  CHECK(with(load_topology("h100-cluster-2"), "host_cpu=arm").topology.facts().host_cpu ==
        HostCpu::arm);
  TopologyEdits e;
  e.settings.push_back(parse_setting("host_cpu=x86-amd"));
  CHECK(e.label() == "host_cpu=x86-amd");
}

TEST_CASE("set host_cpu: another name or a number is refused naming the choices",
          "[topologies][whatif]") {
  for (const char* bad : {"host_cpu=intel", "host_cpu=1", "host_cpu=", "host_cpu=X86"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_setting(bad), twinccl::InvalidArgument);
    CHECK_THROWS_WITH(parse_setting(bad), Contains("host_cpu takes one of x86, x86-amd, arm"));
  }
  // A Setting built in code with an index outside the choices: refused, not read past the list.
  TopologyEdits e;
  e.settings.push_back({"host_cpu", 3.0});
  CHECK_THROWS_WITH(apply_edits(load_topology("dgx-h100"), e), Contains("not one of 0..2"));
}

TEST_CASE("set network: a class by its file name, the links untouched", "[topologies][whatif]") {
  const Topology ib = load_topology("h100-cluster-2");
  REQUIRE(ib.facts().network == NetworkClass::infiniband);
  for (const std::string_view name : network_class_names()) {
    INFO(name);
    const EditedTopology e = with(ib, "network=" + std::string(name));
    CHECK(e.topology.facts().network == *parse_network_class(name));
    CHECK(e.topology.summary().nic_bandwidth_gbps == ib.summary().nic_bandwidth_gbps);
    CHECK_THAT(e.topology.name(), Contains("network=" + std::string(name)));
  }
  CHECK_THROWS_WITH(parse_setting("network=ib"),
                    Contains("network takes one of infiniband, roce, efa, tcpxo, efa-v3"));
  CHECK(with(load_topology("aws-p5-2"), "network=infiniband").topology.facts().network ==
        NetworkClass::infiniband);
}
