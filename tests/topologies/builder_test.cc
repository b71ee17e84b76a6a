// TopologyBuilder validation: each bad input is a ConfigError naming what, where and the value.
#include "twinccl/topologies/builder.h"

#include <catch2/catch.hpp>
#include <limits>

#include "twinccl/errors.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {

const LinkSpec kPcie{.type = LinkType::pcie, .bandwidth_gbps = 24, .latency_us = 0.25};

// Two GPUs under one switch: the smallest valid topology with a route.
TopologyBuilder two_gpus() {
  TopologyBuilder b("pair");
  const VertexId sw = b.add_switch(VertexKind::pcie_switch, "sw", 0);
  b.connect(b.add_gpu("gpu0", 0), sw, kPcie);
  b.connect(b.add_gpu("gpu1", 0), sw, kPcie);
  return b;
}

}  // namespace

TEST_CASE("a minimal builder seals", "[topologies][builder]") {
  TopologyBuilder b = two_gpus();
  const Topology t = b.seal();
  CHECK(t.name() == "pair");
  CHECK(t.gpu_count() == 2);
  CHECK(t.vertices().size() == 3);
  CHECK(t.links().size() == 2);
  CHECK(t.find("gpu1") == t.gpu(1));
  CHECK_FALSE(t.find("gpu2").has_value());
  CHECK(b.vertex_count() == 0);  // seal() empties the builder
  CHECK(t.vertex(t.gpu(1)).local_index == 1);
  CHECK_FALSE(t.vertex(t.gpu(0)).forwards);
  CHECK(t.vertex(*t.find("sw")).forwards);
}

TEST_CASE("one GPU alone is a valid topology", "[topologies][builder]") {
  TopologyBuilder b("solo");
  b.add_gpu("gpu0", 0);
  const Topology t = b.seal();
  CHECK(t.gpu_count() == 1);
  CHECK(t.route(0, 0).empty());
}

TEST_CASE("no GPU", "[topologies][builder]") {
  TopologyBuilder b("empty");
  b.add_switch(VertexKind::pcie_switch, "sw", 0);
  CHECK_THROWS_WITH(b.seal(), Contains("empty") && Contains("no GPU"));
}

TEST_CASE("duplicate vertex names", "[topologies][builder]") {
  TopologyBuilder b = two_gpus();
  b.add_gpu("gpu0", 0);
  CHECK_THROWS_WITH(b.seal(), Contains("'gpu0'") && Contains("used twice"));
}

TEST_CASE("link to a vertex that does not exist", "[topologies][builder]") {
  TopologyBuilder b = two_gpus();
  b.connect(0, 42, kPcie);
  CHECK_THROWS_WITH(b.seal(),
                    Contains("link 2") && Contains("endpoint b = 42") && Contains("not a vertex"));
  TopologyBuilder c = two_gpus();
  CHECK_THROWS_WITH(c.connect("gpu0", "nope", kPcie),
                    Contains("'nope'") && Contains("not a vertex"));
}

TEST_CASE("bad bandwidth, latency and lanes name the link, field and value",
          "[topologies][builder]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    LinkSpec spec;
    std::string field, value;
  };
  const auto [spec, field, value] = GENERATE_COPY(values<Case>({
      {{.bandwidth_gbps = -5, .latency_us = 1}, "bandwidth_gbps", "got -5"},
      {{.bandwidth_gbps = 0, .latency_us = 1}, "bandwidth_gbps", "got 0"},
      {{.bandwidth_gbps = inf, .latency_us = 1}, "bandwidth_gbps", "got inf"},
      {{.bandwidth_gbps = nan, .latency_us = 1}, "bandwidth_gbps", "got nan"},
      {{.bandwidth_gbps = 10, .latency_us = -0.5}, "latency_us", "got -0.5"},
      {{.bandwidth_gbps = 10, .latency_us = inf}, "latency_us", "got inf"},
      {{.bandwidth_gbps = 10, .latency_us = 1, .lanes = 0}, "lanes", "got 0"},
  }));
  TopologyBuilder b = two_gpus();
  b.connect("gpu0", "gpu1", spec);
  CHECK_THROWS_WITH(b.seal(),
                    Contains("link 2 (gpu0 <-> gpu1)") && Contains(field) && Contains(value));
}

TEST_CASE("self loop", "[topologies][builder]") {
  TopologyBuilder b = two_gpus();
  b.connect("sw", "sw", kPcie);
  CHECK_THROWS_WITH(b.seal(), Contains("link 2 (sw <-> sw)") && Contains("itself"));
}

TEST_CASE("disconnected GPU", "[topologies][builder]") {
  TopologyBuilder b = two_gpus();
  b.add_gpu("lonely", 0);
  CHECK_THROWS_WITH(b.seal(),
                    Contains("gpu 'lonely'") && Contains("rank 2") && Contains("cannot reach"));
}

TEST_CASE("GPUs do not forward: two GPUs joined only through a third are not connected",
          "[topologies][builder]") {
  TopologyBuilder b("chain");
  const VertexId g0 = b.add_gpu("g0", 0), g1 = b.add_gpu("g1", 0), g2 = b.add_gpu("g2", 0);
  b.connect(g0, g1, {.type = LinkType::nvlink, .bandwidth_gbps = 20})
      .connect(g1, g2, {.type = LinkType::nvlink, .bandwidth_gbps = 20});
  CHECK_THROWS_WITH(b.seal(), Contains("'g2'") && Contains("cannot reach") && Contains("'g0'"));
  TopologyBuilder c("chain-forwarding");
  const VertexId h0 = c.add_gpu("h0", 0);
  const VertexId h1 =
      c.add_vertex({.kind = VertexKind::gpu, .name = "h1", .node = 0, .forwards = true});
  const VertexId h2 = c.add_gpu("h2", 0);
  c.connect(h0, h1, {.type = LinkType::nvlink, .bandwidth_gbps = 20})
      .connect(h1, h2, {.type = LinkType::nvlink, .bandwidth_gbps = 20});
  const Topology t = c.seal();
  CHECK(measure(t, t.route(0, 2)).hops == 2);
}

TEST_CASE("GPU ranks must be 0..n-1 without repeats", "[topologies][builder]") {
  TopologyBuilder b("ranks");
  const VertexId sw = b.add_switch(VertexKind::pcie_switch, "sw", 0);
  b.connect(b.add_gpu("a", 0, 1), sw, kPcie);
  b.connect(b.add_gpu("b", 0, 1), sw, kPcie);
  CHECK_THROWS_WITH(b.seal(), Contains("gpu 'b'") && Contains("rank 1 already belongs to gpu 'a'"));
  TopologyBuilder c("ranks");
  c.add_gpu("a", 0, 5);
  CHECK_THROWS_WITH(c.seal(), Contains("rank must be in 0..0, got 5"));
}

TEST_CASE("nodes: GPUs need a node, network switches none, and nodes hold GPUs",
          "[topologies][builder]") {
  TopologyBuilder b("nodes");
  b.add_gpu("g", -1);
  CHECK_THROWS_WITH(b.seal(),
                    Contains("gpu 'g'") && Contains("node must be >= 0") && Contains("got -1"));
  TopologyBuilder c = two_gpus();
  c.add_vertex({.kind = VertexKind::network_switch, .name = "tor", .node = 0});
  CHECK_THROWS_WITH(c.seal(), Contains("'tor'") && Contains("node must be -1"));
  TopologyBuilder d = two_gpus();
  d.add_cpu("cpu-of-node-2", 2);
  CHECK_THROWS_WITH(d.seal(), Contains("node 1 has no GPU"));
}

TEST_CASE("facts: NVLS needs an NVSwitch, PCIe generation range", "[topologies][builder]") {
  TopologyBuilder b = two_gpus();
  b.nvls(true);
  CHECK_THROWS_WITH(b.seal(), Contains("nvls") && Contains("no nvswitch"));
  TopologyBuilder c = two_gpus();
  c.pcie_gen(9);
  CHECK_THROWS_WITH(c.seal(), Contains("pcie_gen") && Contains("got 9"));
}

TEST_CASE("link speed tables", "[topologies][builder]") {
  CHECK(pcie_bandwidth_gbps(4, 16) == Approx(24.0));
  CHECK(pcie_bandwidth_gbps(5, 16) == Approx(48.0));
  CHECK(pcie_bandwidth_gbps(3, 8) == Approx(6.0));
  CHECK(pcie_bandwidth_gbps(1, 1) == Approx(0.1875));
  CHECK_THROWS_AS(pcie_bandwidth_gbps(7, 16), twinccl::InvalidArgument);
  CHECK(nvlink_link_bandwidth_gbps(GpuArch::ampere) == 20.0);
  CHECK(nvlink_link_bandwidth_gbps(GpuArch::hopper) == 20.6);
  CHECK(nvlink_link_bandwidth_gbps(GpuArch::blackwell) == 40.1);
  for (std::string_view s : {"gpu", "nvswitch", "pcie_switch", "cpu", "nic", "network_switch"}) {
    CHECK(to_string(*parse_vertex_kind(s)) == s);
  }
  CHECK_FALSE(parse_link_type("ethernet").has_value());
}
