// The JSON topology format: round trips, templates and placeholders, the example files, and a
// ConfigError naming the JSON path, field and value for every malformed input.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "support/scratch_dir.h"
#include "test_paths.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {

void check_same_graph(const Topology& a, const Topology& b) {
  REQUIRE(a.vertices().size() == b.vertices().size());
  REQUIRE(a.links().size() == b.links().size());
  for (std::size_t i = 0; i < a.vertices().size(); ++i) {
    const Vertex &x = a.vertices()[i], &y = b.vertices()[i];
    CHECK(x.name == y.name);
    CHECK(x.kind == y.kind);
    CHECK(x.node == y.node);
    CHECK(x.rank == y.rank);
    CHECK(x.local_index == y.local_index);
    CHECK(x.forwards == y.forwards);
    CHECK(x.physical_switches == y.physical_switches);
    CHECK(x.level == y.level);
    CHECK(x.radix == y.radix);
    CHECK(x.port_bandwidth_gbps == y.port_bandwidth_gbps);
  }
  for (std::size_t i = 0; i < a.links().size(); ++i) {
    const Link &x = a.links()[i], &y = b.links()[i];
    CHECK(x.a == y.a);
    CHECK(x.b == y.b);
    CHECK(x.type == y.type);
    CHECK(x.bandwidth_gbps == y.bandwidth_gbps);
    CHECK(x.latency_us == y.latency_us);
    CHECK(x.duplex == y.duplex);
    CHECK(x.sharing == y.sharing);
    CHECK(x.lanes == y.lanes);
  }
  CHECK(a.name() == b.name());
  CHECK(a.description() == b.description());
  CHECK(a.facts().arch == b.facts().arch);
  CHECK(a.facts().pcie_gen == b.facts().pcie_gen);
  CHECK(a.facts().nvls == b.facts().nvls);
}

std::string error_of(const std::string& text) {
  try {
    topology_from_json(text, "t.json");
  } catch (const twinccl::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// A valid two-GPU document with `links` spliced in.
std::string doc_with_links(const std::string& links) {
  return R"({"version": 1, "name": "x", "vertices": [
      {"name": "sw", "kind": "pcie_switch", "node": 0},
      {"name": "g0", "kind": "gpu", "node": 0}, {"name": "g1", "kind": "gpu", "node": 0}],
    "links": [)" +
         links + "]}";
}

const std::string kGoodLinks =
    R"({"a": "g0", "b": "sw", "type": "pcie", "bandwidth_gbps": 24},
       {"a": "g1", "b": "sw", "type": "pcie", "bandwidth_gbps": 24})";

}  // namespace

TEST_CASE("JSON round trip of every preset", "[topologies][json]") {
  const std::string name =
      GENERATE(as<std::string>{}, "dgx-a100", "dgx-h100", "pcie-4gpu", "h100x3", "torus-3x4-75");
  const Topology t = load_topology(name);
  const std::string text = to_json(t);
  const Topology back = topology_from_json(text, name + ".json");
  check_same_graph(t, back);
  CHECK(to_json(back) == text);
  for (int r = 0; r < t.gpu_count(); ++r) CHECK(back.route(0, r) == t.route(0, r));
}

TEST_CASE("JSON round trip keeps half duplex, fatpipe, forwarding GPUs and unset facts",
          "[topologies][json]") {
  TopologyBuilder b("odd \"quoted\" name");
  const VertexId g0 =
      b.add_vertex({.kind = VertexKind::gpu, .name = "g0", .node = 0, .rank = 1, .forwards = true});
  const VertexId g1 =
      b.add_vertex({.kind = VertexKind::gpu, .name = "g1", .node = 0, .rank = 0, .local_index = 7});
  const VertexId sw =
      b.add_vertex({.kind = VertexKind::nvswitch, .name = "sw", .node = 0, .physical_switches = 3});
  b.connect(g0, sw,
            {.type = LinkType::nvlink,
             .bandwidth_gbps = 0.1,
             .latency_us = 1e-3,
             .duplex = Duplex::half,
             .sharing = Sharing::fatpipe,
             .lanes = 3})
      .connect(g1, sw,
               {.type = LinkType::switch_internal, .bandwidth_gbps = 1.0 / 3.0, .latency_us = 0});
  const Topology t = b.seal();
  const Topology back = topology_from_json(to_json(t), "odd.json");
  check_same_graph(t, back);
  CHECK_FALSE(back.facts().nvls.has_value());
}

TEST_CASE("JSON round trip through a file", "[topologies][json]") {
  const twinccl_test::ScratchDir scratch("twinccl-topo-roundtrip");
  const std::filesystem::path path = scratch.path("topology.json");
  const Topology t = h100_cluster(2);
  save_topology_json(t, path);
  const Topology back = load_topology(path.string());
  check_same_graph(t, back);
}

TEST_CASE("example cluster file matches the h100-cluster-64 preset", "[topologies][json]") {
  const Topology file = load_topology(testing::example_path("cluster-64-h100.json").string());
  const Topology preset = h100_cluster(64);
  const TopologySummary a = file.summary(), b = preset.summary();
  CHECK(a.gpus == 512);
  CHECK(a.nodes == b.nodes);
  CHECK(a.nvlink_bandwidth_gbps == Approx(b.nvlink_bandwidth_gbps));
  CHECK(a.nvlinks_per_gpu == b.nvlinks_per_gpu);
  CHECK(a.nvls_capable == b.nvls_capable);
  CHECK(a.pcie_bandwidth_gbps == b.pcie_bandwidth_gbps);
  CHECK(a.nics_per_node == b.nics_per_node);
  CHECK(a.network_switches == b.network_switches);
  CHECK(a.network_levels == b.network_levels);
  CHECK(file.links().size() == preset.links().size());
  for (auto [x, y] : {std::pair{0, 1}, {0, 8}, {0, 9}, {7, 8}, {1, 257}, {100, 411}, {511, 0}}) {
    INFO(x << " -> " << y);
    std::vector<std::string> p, q;
    for (VertexId v : file.route_vertices(x, y)) p.push_back(file.vertex(v).name);
    for (VertexId v : preset.route_vertices(x, y)) q.push_back(preset.vertex(v).name);
    CHECK(p == q);
    CHECK(measure(file, file.route(x, y)).latency_us ==
          Approx(measure(preset, preset.route(x, y)).latency_us));
  }
}

TEST_CASE("example two-node file", "[topologies][json]") {
  const Topology t = load_topology(testing::example_path("two-node-pcie.json").string());
  CHECK(t.gpu_count() == 4);
  CHECK(t.node_count() == 2);
  const RouteMetrics m = measure(t, t.route(0, 3));
  CHECK(m.hops == 6);  // gpu -> pcie -> nic -> tor -> nic -> pcie -> gpu
  CHECK(m.bottleneck_bandwidth_gbps == Approx(12.5));
  CHECK(t.summary().nic_bandwidth_gbps == Approx(12.5));
}

TEST_CASE("templated example file equals the explicit one", "[topologies][json]") {
  const Topology plain = load_topology(testing::example_path("two-node-pcie.json").string());
  const Topology tpl =
      load_topology(testing::example_path("two-node-pcie-templated.json").string());
  CHECK(tpl.vertices().size() == plain.vertices().size());
  CHECK(tpl.links().size() == plain.links().size());
  CHECK(tpl.vertex(tpl.gpu(3)).name == "n1.gpu1");
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      const RouteMetrics x = measure(tpl, tpl.route(a, b)), y = measure(plain, plain.route(a, b));
      CHECK(x.hops == y.hops);
      CHECK(x.bottleneck_bandwidth_gbps == y.bottleneck_bandwidth_gbps);
      CHECK(x.latency_us == Approx(y.latency_us));
    }
  }
}

TEST_CASE("templates, repeat, for_each, placeholders and defaults", "[topologies][json]") {
  const Topology t = topology_from_json(R"({
    "version": 1, "name": "tpl",
    "defaults": {"link": {"type": "pcie", "bandwidth_gbps": 10, "latency_us": 0.5}},
    "node_templates": {"box": {
      "vertices": [{"name": "sw", "kind": "pcie_switch"}, {"name": "gpu{i}", "kind": "gpu", "repeat": 3},
                   {"name": "nic", "kind": "nic", "port_bandwidth_gbps": 25}],
      "links": [{"a": "gpu{i}", "b": "sw", "repeat": 3}, {"a": "nic", "b": "sw"},
                {"a": "nic", "b": "/tor{node%2}", "type": "network", "bandwidth_gbps": 25}]}},
    "nodes": [{"template": "box", "count": 4}],
    "vertices": [{"name": "tor{i}", "kind": "network_switch", "repeat": 2},
                 {"name": "core", "kind": "network_switch"}],
    "links": [{"a": "tor{t}", "b": "core", "type": "network", "bandwidth_gbps": 50,
               "for_each": {"t": [0, 1]}}]
  })");
  CHECK(t.gpu_count() == 12);
  CHECK(t.node_count() == 4);
  CHECK(t.vertex(t.gpu(4)).name == "n1.gpu1");
  CHECK(t.vertex(t.gpu(4)).node == 1);
  CHECK(t.link(0).latency_us == 0.5);          // from defaults
  CHECK(measure(t, t.route(0, 6)).hops == 6);  // nodes 0 and 2 share tor0
  CHECK(measure(t, t.route(0, 3)).hops == 8);  // node 1 is on tor1: via core
  CHECK(t.summary().network_levels == 2);      // levels computed when not declared
}

TEST_CASE("malformed JSON files name the field", "[topologies][json]") {
  CHECK_THAT(error_of(R"({"name": "x"})"),
             Contains("t.json") && Contains("version") && Contains("missing"));
  CHECK_THAT(error_of(R"({"version": 2})"), Contains("version: must be 1, got 2"));
  CHECK_THAT(
      error_of(doc_with_links(R"({"a": "g0", "b": "nope", "type": "pcie", "bandwidth_gbps": 1})")),
      Contains("links[0].b: unknown vertex 'nope'"));
  CHECK_THAT(
      error_of(doc_with_links(
          kGoodLinks + R"(, {"a": "g0", "b": "g1", "type": "nvlink", "bandwidth_gbps": -5})")),
      Contains("t.json: links[2].bandwidth_gbps: must be in 0.001..1e+06 GB/s, got -5"));
  CHECK_THAT(
      error_of(doc_with_links(
          R"({"a": "g0", "b": "sw", "type": "pcie", "bandwidth_gbps": 1, "latency_us": -1})")),
      Contains("links[0].latency_us: must be in 0..1e+06 us, got -1"));
  CHECK_THAT(error_of(doc_with_links(R"({"a": "g0", "b": "sw", "type": "pcie"})")),
             Contains("links[0].bandwidth_gbps: missing"));
  CHECK_THAT(
      error_of(doc_with_links(R"({"a": "g0", "b": "sw", "type": "copper", "bandwidth_gbps": 1})")),
      Contains("links[0].type: must be one of") && Contains("\"copper\""));
  CHECK_THAT(
      error_of(doc_with_links(R"({"a": "g0", "b": "sw", "type": "pcie", "bandwith_gbps": 1})")),
      Contains("links[0]: unknown field 'bandwith_gbps'"));
  CHECK_THAT(error_of(doc_with_links(
                 R"({"a": "g0", "b": "sw", "type": "pcie", "bandwidth_gbps": "fast"})")),
             Contains("links[0].bandwidth_gbps: must be a number"));
  CHECK_THAT(
      error_of(doc_with_links(R"({"a": "g0", "b": "sw", "type": "pcie", "bandwidth_gbps": 1})")),
      Contains("t.json") && Contains("gpu 'g1'") && Contains("cannot reach"));
  CHECK_THAT(
      error_of(doc_with_links(
          kGoodLinks +
          R"(, {"a": "g{j}", "b": "sw", "type": "pcie", "bandwidth_gbps": 1, "repeat": 2})")),
      Contains("links[2] (i=0).a") && Contains("unknown variable 'j'"));
  CHECK_THAT(error_of(R"({"version": 1, "vertices": [{"name": "g", "kind": "gpu", "node": 0},
                                                     {"name": "g", "kind": "gpu", "node": 0}]})"),
             Contains("vertices[1].name") && Contains("'g' already exists"));
  CHECK_THAT(error_of(R"({"version": 1, "vertices": [{"name": "g", "kind": "tpu", "node": 0}]})"),
             Contains("vertices[0].kind: must be one of"));
  CHECK_THAT(error_of(R"({"version": 1, "nodes": [{"template": "missing"}]})"),
             Contains("nodes[0].template: unknown node template 'missing'"));
  CHECK_THAT(
      error_of(
          R"({"version": 1, "node_templates": {"b": {"vertices": [{"name": "g", "kind": "gpu", "node": 3}]}},
                          "nodes": [{"template": "b"}]})"),
      Contains("node_templates.b.vertices[0] (node=0).node: not allowed inside a node template"));
  CHECK_THAT(
      error_of(
          R"({"version": 1, "vertices": [{"name": "g{i}", "kind": "gpu", "node": 0, "repeat": 1000000000}]})"),
      Contains("vertices[0]: repeats more than"));
  CHECK_THAT(error_of(R"({"version": 1, "vertices": []})"), Contains("no GPU"));
}

TEST_CASE("bad JSON syntax gives the line", "[topologies][json]") {
  const std::string text = "{\n  \"version\": 1,\n  \"name\": \"x\"\n  \"links\": []\n}\n";
  CHECK_THAT(error_of(text), Contains("t.json: not valid JSON at line 4"));
  CHECK_THAT(error_of(""), Contains("not valid JSON"));
  CHECK_THAT(error_of("[1, 2]"), Contains("must be an object"));
}
