// GCP's NCCL environments as the model prices them (sim/src/network_class.h; docs/fidelity.md
// "GCP's environments"): TCPXO's per-hop cost and TCPX's call floor and delivered rate, each fitted
// on Google's own published 2-node all_gather (cluster-toolkit@1047080) and checked here on runs it
// was not fitted on; and the gIB environment's NCCL_NVLS_CHUNKSIZE on A4 (cluster-toolkit@1047080
// examples/machine-learning/a4-highgpu-8g/a4high-vm.yaml:293) with NCCL's 64 KiB NVLS-tree cap
// from 4 nodes (NVIDIA/nccl v2.27.7-1 src/enqueue.cc:2023-2026).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>

#include "../../sim/src/model.h"
#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

using fidelity::all_gather_request;

double bare_us(const topo::Topology& t, Request r) {
  r.software_latency = false;
  return predict(t, r).time_us;
}

}  // namespace

// The hop (NCCL's Simple 14 us + 18 us) was fitted on Google's all_gather log below 1 MiB; the
// first-round A3 Mega all_reduce log (gcp-a3mega-h100-2node-all_reduce.log, a different run and
// collective: tree/Simple, 2 network hops) was 21-28% fast on NCCL's IB hop.
TEST_CASE("GCP TCPXO: the per-hop cost of Google's published run holds on A3 Mega's all_reduce") {
  const topo::Topology a3mega = topo::load_topology("gcp-a3mega-2");
  for (const auto& [bytes, measured_us] :
       {std::pair<std::size_t, double>{8, 135.8}, {32768, 155.2}, {std::size_t{1} << 20, 203.2}}) {
    const Prediction p = predict(a3mega, fidelity::all_reduce_request(bytes));
    INFO(bytes << " B: " << p.algorithm << "/" << name(p.protocol) << " " << p.time_us << " us");
    CHECK(p.algorithm == "tree");
    CHECK(p.protocol == Protocol::simple);
    CHECK(std::abs(p.time_us / measured_us - 1.0) <= 0.10);
  }
}

// A3 High: a floor of 880 us a call across nodes and 0.85 of the NICs' line rate, the call's only.
TEST_CASE("GCP TCPX: A3 High's call floor and delivered rate, not NCCL's ranking") {
  const topo::Topology a3high = topo::load_topology("gcp-a3high-2");
  const topo::Topology a3mega = topo::load_topology("gcp-a3mega-2");
  const Prediction small = predict(a3high, all_gather_request(std::size_t{1} << 20, 16));
  CHECK(small.algorithm == "ring");
  CHECK(small.protocol == Protocol::simple);
  CHECK(fidelity::fixed_latency_us(a3high, all_gather_request(std::size_t{1} << 20, 16)) >= 880.0);
  CHECK(fidelity::fixed_latency_us(a3mega, all_gather_request(std::size_t{1} << 20, 16)) <
        100.0);  // TCPXO: none
  // 4 TCPX NICs delivering 0.85 against A3 Mega's 8 TCPXO NICs at NCCL's speed (both 24 GB/s a
  // channel): 0.85 x 4 / 8 of A3 Mega's rate.
  const std::size_t big = std::size_t{8} << 30;
  CHECK(bare_us(a3mega, all_gather_request(big, 16)) /
            bare_us(a3high, all_gather_request(big, 16)) ==
        Approx(0.85 * 4.0 / 8.0).epsilon(1e-3));
  // Held out: dstack's A3 High 8 MiB / 8 GiB rows (784.9 / 160505 us) were -80% / -48%.
  CHECK(std::abs(predict(a3high, all_gather_request(std::size_t{8} << 20, 16)).time_us / 784.9 -
                 1.0) <= 0.40);
  CHECK(std::abs(predict(a3high, all_gather_request(big, 16)).time_us / 160505.0 - 1.0) <= 0.40);
}

// gIB's 512 KiB NCCL_NVLS_CHUNKSIZE: NVLS-tree on 2 A4 nodes starts from it (8 GiB keeps it:
// >= 32 x 32 channels x 8 heads x 512 KiB); from 4 nodes NCCL's NVLSTREE_MAX_CHUNKSIZE default
// (64 KiB) still caps it, as the environment leaves that one unset. An IB B200 pair keeps 128 KiB.
TEST_CASE("GCP gIB on A4: NCCL_NVLS_CHUNKSIZE 512 KiB, NCCL's 64 KiB cap from 4 nodes") {
  const auto chunk = [](const char* preset, int ranks) {
    const detail::TopologyView v = detail::view_of(topo::load_topology(preset), ranks);
    return detail::nccl_nvls_chunk_bytes(v, detail::NcclAlgo::nvls_tree, 8.0 * (1u << 30),
                                         detail::nccl_nvls_ops(v));
  };
  CHECK(chunk("gcp-a4-2", 16) == 524288.0);
  CHECK(chunk("gcp-a4-4", 32) == 65536.0);
  CHECK(chunk("b200-cluster-2", 16) == 131072.0);
  // Held out: dstack's A4 all_reduce 1 GiB (3229.9 us) was -6.0% with the 128 KiB chunk.
  const Prediction p =
      predict(topo::load_topology("gcp-a4-2"), fidelity::all_reduce_request(std::size_t{1} << 30));
  CHECK(p.algorithm == "nvls_tree");
  CHECK(std::abs(p.time_us / 3229.9 - 1.0) <= 0.03);
}

// TCPX's floor and delivered rate are the call's, in flow as in analytic (one reading:
// nccl_call_bus_gbps and pipeline_fills_us). Flow ran 5313 us here against analytic's 7118 when
// only analytic carried them.
TEST_CASE("GCP TCPX: flow pays A3 High's floor and delivered rate as analytic does") {
  const topo::Topology a3high = topo::load_topology("gcp-a3high-2");
  Request r = all_gather_request(std::size_t{512} << 20, 16);
  const double analytic_us = predict(a3high, r).time_us;
  r.fidelity = Fidelity::flow;
  CHECK(predict(a3high, r).time_us == Approx(analytic_us).epsilon(0.01));
}
