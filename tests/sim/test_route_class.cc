// A route's class (sim/src/route_latency.h route_link_class), the one rule every model charges a
// transfer's hop by: flow's routes (RouteTable), a send's price and alpha-beta's routes asked it
// each with their own copy of the loop until this rule had one owner. A route across nodes also
// crosses PCIe (GPU -> PCIe switch -> NIC) and is a network route: the network class wins over
// PCIe, PCIe over NVLink.
#include <catch2/catch.hpp>
#include <vector>

#include "../../sim/src/flow_program.h"
#include "../../sim/src/route_latency.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using sim::detail::LinkClass;
using sim::detail::route_link_class;

namespace {

LinkClass class_of(const topo::Topology& t, int a, int b) {
  const std::vector<topo::LinkId> links = t.route(a, b);
  return route_link_class(t, links);
}

}  // namespace

TEST_CASE("route class: network over PCIe over NVLink, one rule for flow and the pricing",
          "[sim][route]") {
  const topo::Topology cluster = topo::h100_cluster(2);
  const topo::Topology pcie = topo::pcie_4gpu();

  SECTION("the rule") {
    CHECK(class_of(cluster, 0, 1) == LinkClass::nvlink);   // through the node's NVSwitch
    CHECK(class_of(cluster, 0, 8) == LinkClass::network);  // GPU -> PCIe -> NIC -> leaf -> ...
    CHECK(class_of(pcie, 0, 1) == LinkClass::pcie);
    // The cross-node route does cross PCIe: the class is the network's, not the first met.
    bool crosses_pcie = false;
    for (topo::LinkId id : cluster.route(0, 8)) {
      crosses_pcie = crosses_pcie || cluster.link(id).type == topo::LinkType::pcie;
    }
    CHECK(crosses_pcie);
    CHECK(route_link_class(cluster, {}) == LinkClass::nvlink);  // no link: nothing slower
  }

  SECTION("flow's route table classes its routes by the same rule") {
    for (const topo::Topology* t : {&cluster, &pcie}) {
      sim::detail::FlowProgram program;
      program.nranks = t->gpu_count();  // the table keeps its routes per source rank
      sim::detail::RouteTable routes(*t, program);
      for (int b = 1; b < t->gpu_count(); ++b) {
        const int route = routes.route_id(0, b);
        CHECK(routes.route_class(route) == class_of(*t, 0, b));
      }
    }
  }
}
