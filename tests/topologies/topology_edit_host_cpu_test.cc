// `--set host_cpu=NAME`: the hosts' CPU, a topology fact NCCL prices (a multi-node ring's network
// post, LL's multi-node cap, Blackwell's NVLS-tree correction), set by name as a topology file
// sets it; every other name is refused listing the ones there are.
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
