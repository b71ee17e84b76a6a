// describe(), draw_node() and check_report(): the numbers and names people read.
#include <catch2/catch.hpp>
#include <sstream>

#include "twinccl/errors.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {

std::size_t widest_line(const std::string& text) {
  std::istringstream in(text);
  std::size_t widest = 0;
  for (std::string line; std::getline(in, line);) widest = std::max(widest, line.size());
  return widest;
}

}  // namespace

TEST_CASE("describe names the numbers", "[topologies][text]") {
  const std::string d = describe(dgx_h100());
  CHECK_THAT(d, Contains("dgx-h100") && Contains("18 links x 20.6 GB/s = 370.8 GB/s") &&
                    Contains("NVLS in-switch reduction: yes") && Contains("gen5, 48 GB/s") &&
                    Contains("8 per node x 50 GB/s (400 Gb/s)") && Contains("network   none") &&
                    Contains("routing") && Contains("ECMP"));
  CHECK(widest_line(d) <= 100);
  const std::string c = describe(h100_cluster(16));
  CHECK_THAT(c, Contains("128 (16 nodes x 8)") && Contains("2 levels, 40 switches, radix 64"));
  CHECK_THAT(describe(pcie_4gpu()),
             Contains("NVLink    none") && Contains("NVLS in-switch reduction: no"));
  // The host CPU (NCCL's x86-only corrections) and the -g N launch the preset carries.
  CHECK_THAT(d, Contains("host CPU  x86") && Contains("3.2 us per GPU of a -g N thread"));
  CHECK_THAT(describe(load_topology("gb200-nvl72")), Contains("host CPU  arm"));
}

TEST_CASE("draw_node draws GPUs, ranks, switches and NICs within 100 columns",
          "[topologies][text]") {
  const std::string n = draw_node(h100_cluster(2), 1);
  CHECK_THAT(n, Contains("node 1 of h100-cluster-2") && Contains("4 NVSwitch chips, NVLS") &&
                    Contains("gpu7") && Contains("rank 15") && Contains("|370.8") &&
                    Contains("pcie3") && Contains("nic7") && Contains("leaf.su0.r7") &&
                    Contains("50 GB/s") && Contains("cpu1:"));
  CHECK(widest_line(n) <= 100);
  const std::string torus = draw_node(torus_2d(4, 4), 0);
  CHECK_THAT(torus, Contains("gpu3_3") && Contains("rank 15") && Contains("GPU-GPU links") &&
                        Contains("gpu0_0-gpu0_1 50"));
  CHECK(widest_line(torus) <= 100);
  CHECK(widest_line(check_report(h100_cluster(3))) <= 100);
  CHECK(widest_line(draw_node(torus_2d(16, 16), 0)) <= 100);
  CHECK_THAT(draw_node(torus_2d(16, 16), 0), Contains("and 192 more GPUs"));
  CHECK_THROWS_AS(draw_node(dgx_h100(), 1), twinccl::InvalidArgument);
}

TEST_CASE("check_report: OK, route statistics and warnings", "[topologies][text]") {
  const std::string ok = check_report(h100_cluster(2));
  CHECK_THAT(ok, Contains("h100-cluster-2: OK") && Contains("routes checked: 31 (") &&
                     Contains("at most 8 hops") && Contains("slowest link 48 GB/s") &&
                     Contains("warnings: 0"));
  // Two nodes, no NIC in node 1, a half-duplex link, an oversubscribed switch, a 50 GB/s NIC
  // behind a 24 GB/s PCIe link.
  TopologyBuilder b("odd");
  const VertexId tor = b.add_vertex({.kind = VertexKind::network_switch, .name = "tor"});
  const VertexId core = b.add_vertex({.kind = VertexKind::network_switch, .name = "core"});
  const VertexId g0 = b.add_gpu("g0", 0), g1 = b.add_gpu("g1", 1);
  const VertexId n0 = b.add_nic("nic0", 0, 50);
  b.connect(g0, n0, {.type = LinkType::pcie, .bandwidth_gbps = 24})
      .connect(n0, tor, {.type = LinkType::network, .bandwidth_gbps = 50})
      .connect(tor, core, {.type = LinkType::network, .bandwidth_gbps = 25, .duplex = Duplex::half})
      .connect(g1, core, {.type = LinkType::pcie, .bandwidth_gbps = 24});
  const std::string odd = check_report(b.seal());
  CHECK_THAT(odd, Contains("odd: OK") && Contains("1 GPUs have no NIC") &&
                      Contains("1 half-duplex") && Contains("'tor' is oversubscribed 2:1") &&
                      Contains("1 NICs run at most at their PCIe link: 50 GB/s ports behind 24") &&
                      Contains("warnings: 4"));
}
