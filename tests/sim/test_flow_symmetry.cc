// Symmetric flows played once (sim/src/flow_symmetry.cc): the aggregated playback equals playing
// every flow, on presets, on a cluster with one slow NIC and one with a shared, slow spine (groups
// that are not alike or not independent), and within 0.1% on 1024 ranks (the bound).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "twinccl/sim/flow_report.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

Request ring(OpKind kind, std::size_t count, Protocol protocol = Protocol::simple) {
  Request r;
  r.spec.kind = kind;
  r.spec.count = count;
  r.algorithm = "ring";
  r.protocol = protocol;
  r.fidelity = Fidelity::flow;
  r.compression = RoundCompression::on;
  return r;
}

// Aggregated and every-flow reports of `r` agree to `tolerance`: time, every link's load and
// every transfer's start and end.
void check_same(const topo::Topology& t, Request r, double tolerance) {
  r.aggregate_symmetric_flows = true;
  const FlowReport fast = simulate_flow(t, r, {.record_transfers = true, .max_transfers = 4096});
  r.aggregate_symmetric_flows = false;
  const FlowReport full = simulate_flow(t, r, {.record_transfers = true, .max_transfers = 4096});
  INFO(t.name() << ": aggregated " << fast.prediction.time_us << " us, every flow "
                << full.prediction.time_us << " us");
  REQUIRE(full.prediction.time_us > 0.0);
  CHECK(rel(fast.prediction.time_us, full.prediction.time_us) < tolerance);
  REQUIRE(fast.links.size() == full.links.size());
  for (std::size_t i = 0; i < full.links.size(); ++i) {
    CHECK(rel(fast.links[i].busy_us, full.links[i].busy_us) < tolerance);
  }
  REQUIRE(fast.transfers.size() == full.transfers.size());
  for (std::size_t i = 0; i < full.transfers.size(); ++i) {
    CHECK(fast.transfers[i].src == full.transfers[i].src);
    CHECK(fast.transfers[i].dst == full.transfers[i].dst);
    CHECK(std::abs(fast.transfers[i].start_us - full.transfers[i].start_us) <
          tolerance * full.prediction.time_us);
    CHECK(std::abs(fast.transfers[i].end_us - full.transfers[i].end_us) <
          tolerance * full.prediction.time_us);
  }
}

// `nodes` nodes of 4 GPUs on an NVSwitch, one NIC per GPU on a leaf per rail, leaves joined by
// `spines` spines at `spine_gbps`; node `slow_node`'s NIC 1 runs at `slow_nic_gbps` (0 = none).
topo::Topology small_cluster(int nodes, int spines, double spine_gbps, int slow_node = -1,
                             double slow_nic_gbps = 0.0) {
  topo::TopologyBuilder b("small-cluster-" + std::to_string(nodes));
  b.arch(topo::GpuArch::hopper);
  const topo::LinkSpec nvlink{
      .type = topo::LinkType::nvlink, .bandwidth_gbps = 370.8, .latency_us = 0.2, .lanes = 18};
  const topo::LinkSpec pcie{
      .type = topo::LinkType::pcie, .bandwidth_gbps = 48.0, .latency_us = 0.25, .lanes = 16};
  const topo::LinkSpec net{
      .type = topo::LinkType::network, .bandwidth_gbps = 50.0, .latency_us = 1.0};
  std::vector<topo::VertexId> leaves;
  for (int rail = 0; rail < 4; ++rail) {
    leaves.push_back(b.add_vertex({.kind = topo::VertexKind::network_switch,
                                   .name = "leaf" + std::to_string(rail),
                                   .node = -1,
                                   .level = 1}));
  }
  for (int s = 0; s < spines; ++s) {
    const topo::VertexId spine = b.add_vertex({.kind = topo::VertexKind::network_switch,
                                               .name = "spine" + std::to_string(s),
                                               .node = -1,
                                               .level = 2});
    topo::LinkSpec up = net;
    up.bandwidth_gbps = spine_gbps;
    for (topo::VertexId leaf : leaves) b.connect(leaf, spine, up);
  }
  for (int n = 0; n < nodes; ++n) {
    const std::string p = "n" + std::to_string(n) + ".";
    const topo::VertexId sw = b.add_switch(topo::VertexKind::nvswitch, p + "nvswitch", n);
    for (int g = 0; g < 4; ++g) {
      const bool slow = n == slow_node && g == 1;
      const topo::VertexId gpu = b.add_gpu(p + "gpu" + std::to_string(g), n, n * 4 + g);
      const topo::VertexId nic = b.add_nic(p + "nic" + std::to_string(g), n, 50.0);
      b.connect(gpu, sw, nvlink);
      b.connect(gpu, nic, pcie);
      topo::LinkSpec leaf_link = net;
      if (slow) leaf_link.bandwidth_gbps = slow_nic_gbps;
      b.connect(nic, leaves[static_cast<std::size_t>(g)], leaf_link);
    }
  }
  return b.seal();
}

}  // namespace

TEST_CASE("flow: aggregated symmetric flows equal every flow played, on presets") {
  const std::string preset = GENERATE("h100-cluster-2", "h100-cluster-4", "dgx-h100", "dgx-a100");
  const OpKind kind = GENERATE(OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather);
  const topo::Topology t = topo::load_topology(preset);
  Request r = ring(kind, 16 * 1000 * 1000);
  INFO(preset << " " << name(kind));
  check_same(t, r, 1e-9);
  r.params.chunk_elements = 300'000;  // pipelined: rounds of several sizes
  r.protocol = Protocol::ll128;
  check_same(t, r, 1e-9);
}

TEST_CASE("flow: aggregated NVLS switch flows equal every flow played") {
  Request r = ring(OpKind::all_reduce, 64 * 1000 * 1000);
  r.algorithm = "nvls";
  r.protocol.reset();
  check_same(topo::dgx_h100(), r, 1e-9);
}

TEST_CASE("flow: aggregation keeps groups that differ apart (one slow NIC)") {
  Request r = ring(OpKind::all_reduce, 8 * 1000 * 1000);
  const topo::Topology uniform = small_cluster(6, 4, 50.0);
  const topo::Topology slow = small_cluster(6, 4, 50.0, 3, 5.0);
  check_same(slow, r, 1e-9);
  // The slow NIC matters: merging its group with the others would have hidden it.
  CHECK(predict(slow, r).time_us > 1.2 * predict(uniform, r).time_us);
}

TEST_CASE("flow: aggregation joins flows that share a link (one slow spine for every rail)") {
  Request r = ring(OpKind::all_reduce, 8 * 1000 * 1000);
  const topo::Topology shared = small_cluster(6, 1, 20.0);
  check_same(shared, r, 1e-9);
  CHECK(predict(shared, r).time_us > 1.5 * predict(small_cluster(6, 1, 400.0), r).time_us);
}

TEST_CASE("flow: 1024-rank ring all_reduce aggregated within 0.1% of every flow played") {
  const topo::Topology t = topo::h100_cluster(128);
  Request r = ring(OpKind::all_reduce, (std::size_t{1} << 30) / 4);
  r.compression = RoundCompression::automatic;  // compressed: more than 64 ranks
  const double fast = predict(t, r).time_us;
  r.aggregate_symmetric_flows = false;
  const double full = predict(t, r).time_us;
  INFO("aggregated " << fast << " us, every flow " << full << " us");
  CHECK(rel(fast, full) < 1e-3);
}
