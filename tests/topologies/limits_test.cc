// The caps of limits.h as TopologyBuilder::seal() applies them (to presets and code as well as
// files), and graphs that are big but valid staying fast to seal and check.
#include "twinccl/topologies/limits.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/describe.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

namespace {

std::string seal_error(const LinkSpec& link) {
  TopologyBuilder b("lim");
  const VertexId g0 = b.add_gpu("g0", 0), g1 = b.add_gpu("g1", 0);
  b.connect(g0, g1, link);
  try {
    b.seal();
  } catch (const twinccl::ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("seal: bandwidth, latency and lanes within physical ranges", "[topologies][limits]") {
  CHECK_THAT(
      seal_error({.bandwidth_gbps = 1e308}),
      Contains("link 0 (g0 <-> g1): bandwidth_gbps must be in 0.001..1e+06 GB/s, got 1e+308"));
  CHECK_THAT(seal_error({.bandwidth_gbps = std::numeric_limits<double>::denorm_min()}),
             Contains("bandwidth_gbps must be in"));
  CHECK_THAT(seal_error({.bandwidth_gbps = std::nan("")}), Contains("got nan"));
  CHECK_THAT(seal_error({.bandwidth_gbps = 20, .latency_us = 1e308}),
             Contains("latency_us must be in 0..1e+06 (1 s), got 1e+308"));
  CHECK_THAT(seal_error({.bandwidth_gbps = 20, .lanes = 100000}),
             Contains("lanes must be in 1..4096, got 100000"));
  CHECK(seal_error({.bandwidth_gbps = 1e-3, .latency_us = 1e6}) == "(no error)");
}

TEST_CASE("seal: a node number far past the GPUs is refused without allocating",
          "[topologies][limits]") {
  TopologyBuilder b("far");
  const VertexId g0 = b.add_gpu("g0", 0);
  const VertexId g1 = b.add_gpu("g1", 2'000'000'000);
  b.connect(g0, g1, {.bandwidth_gbps = 20});
  CHECK_THROWS_WITH(b.seal(),
                    Contains("gpu 'g1': node must be in 0..1") && Contains("got 2000000000"));
}

TEST_CASE("seal: names and vertex fields are bounded", "[topologies][limits]") {
  TopologyBuilder b(std::string(1000, 'n'));
  b.add_gpu("g0", 0);
  CHECK_THROWS_WITH(b.seal(),
                    Contains("topology name longer than 256 bytes") && Contains("(1000 bytes)"));
  TopologyBuilder s("sw");
  const VertexId g = s.add_gpu("g0", 0);
  const VertexId sw = s.add_vertex(
      {.kind = VertexKind::nvswitch, .name = "s", .node = 0, .physical_switches = 1 << 30});
  s.connect(g, sw, {.bandwidth_gbps = 20});
  CHECK_THROWS_WITH(s.seal(), Contains("physical_switches must be in 1..4096"));
}

TEST_CASE("connectivity without a common fabric: pairwise up to a cap", "[topologies][limits]") {
  // Three GPUs joined only by direct links (GPUs do not forward): every pair is linked.
  TopologyBuilder mesh("mesh");
  for (int i = 0; i < 3; ++i) mesh.add_gpu("g" + std::to_string(i), 0);
  mesh.connect(0, 1, {.bandwidth_gbps = 20}).connect(1, 2, {.bandwidth_gbps = 20});
  CHECK_THROWS_WITH(TopologyBuilder(mesh).seal(),
                    Contains("gpu 'g2' (rank 2) cannot reach gpu 'g0' (rank 0)"));
  mesh.connect(0, 2, {.bandwidth_gbps = 20});
  CHECK(mesh.seal().gpu_count() == 3);
  // 1100 GPUs in linked pairs: more than the pairwise cap.
  TopologyBuilder pairs("pairs");
  for (int i = 0; i < 1100; ++i) pairs.add_gpu("g" + std::to_string(i), 0);
  for (int i = 0; i < 1100; i += 2) pairs.connect(i, i + 1, {.bandwidth_gbps = 20});
  CHECK_THROWS_WITH(pairs.seal(),
                    Contains("no forwarding fabric") && Contains("limited to 1024 GPUs (the cap)"));
}

TEST_CASE("one node with 50k GPUs seals and checks in bounded time", "[topologies][limits]") {
  // Finding home NICs looped over the node per GPU and the check routed every rank (quadratic).
  const auto start = std::chrono::steady_clock::now();
  TopologyBuilder b("big-node");
  const int gpus = 50000;
  for (int i = 0; i < gpus; ++i) b.add_gpu("g" + std::to_string(i), 0);
  const VertexId sw = b.add_switch(VertexKind::nvswitch, "s", 0);
  const VertexId nic = b.add_nic("nic", 0, 50);
  for (int i = 0; i < gpus; ++i) b.connect(i, sw, {.type = LinkType::nvlink, .bandwidth_gbps = 20});
  b.connect(nic, sw, {.bandwidth_gbps = 50});
  const Topology t = b.seal();
  CHECK(t.home_nic(gpus - 1) == nic);
  CHECK_THAT(check_report(t), Contains("ranks evenly spaced"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}
