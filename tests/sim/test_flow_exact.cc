// Flow fidelity against formulas: uniform star and cycle (alpha-beta to 1e-9), two flows sharing
// one link, one slow link, compressed rounds equal to full playback.
#include <catch2/catch.hpp>

#include "sim_topologies.h"
#include "twinccl/sim/flow_report.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;
using namespace twinccl::sim::testing;

namespace {
constexpr double kGbps = 100.0;
constexpr double kLatencyUs = 0.5;
double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }
}  // namespace

TEST_CASE("flow: ring all_reduce on a uniform star equals 2(n-1) x (2 latency + chunk/bw)") {
  const int n = GENERATE(2, 3, 4, 7, 8, 16);
  const std::size_t count = static_cast<std::size_t>(n) * GENERATE(1, 1000, 262144);
  const Prediction p = predict(star(n, kGbps, kLatencyUs), ring_request(OpKind::all_reduce, count));
  const double chunk_bytes = static_cast<double>(count / static_cast<std::size_t>(n)) * 4.0;
  const double expected_us = 2.0 * (n - 1) * (2 * kLatencyUs + chunk_bytes / (kGbps * 1e3));
  INFO("n=" << n << " count=" << count);
  CHECK(rel(p.time_us, expected_us) < 1e-9);
  CHECK(p.model == "flow");
}

TEST_CASE("flow: ring all_gather on a cycle equals (n-1) x (latency + block/bw)") {
  const int n = GENERATE(2, 3, 4, 7, 8);
  const std::size_t count = GENERATE(1, 12345);
  const Prediction p =
      predict(cycle(n, kGbps, kLatencyUs), ring_request(OpKind::all_gather, count));
  const double expected_us = (n - 1) * (kLatencyUs + count * 4.0 / (kGbps * 1e3));
  INFO("n=" << n << " count=" << count);
  CHECK(rel(p.time_us, expected_us) < 1e-9);
}

TEST_CASE(
    "flow: one rank puts nothing on a link (its local copy as analytic) and zero bytes take 0") {
  // NCCL's one-rank path is a copy inside the GPU (sim/src/analytic_nccl.cc): flow plays no flow
  // and takes analytic's copy time (here at the GPU's link rate: the arch is unknown).
  Request one = ring_request(OpKind::all_reduce, 1000, 1);
  const double flow_us = predict(star(4, kGbps, kLatencyUs), one).time_us;
  one.fidelity = Fidelity::analytic;
  CHECK(flow_us == Approx(predict(star(4, kGbps, kLatencyUs), one).time_us));
  CHECK(flow_us > 0.0);
  CHECK(predict(star(4, kGbps, kLatencyUs), ring_request(OpKind::all_reduce, 0)).time_us == 0.0);
}

TEST_CASE("flow: two flows on one link get half the bandwidth each") {
  // gather to root 2: ranks 0 and 1 send at once; both cross sw -> gpu2.
  Request r = ring_request(OpKind::gather, 1'000'000);
  r.algorithm = "direct";
  r.spec.root = 2;
  r.spec.nranks = 3;
  const FlowReport rep = simulate_flow(star(3, kGbps, kLatencyUs), r, {.record_transfers = true});
  const double bytes = 4e6;
  const double shared_us = 2 * kLatencyUs + 2 * bytes / (kGbps * 1e3);
  REQUIRE(rep.transfers.size() == 2);
  for (const TransferRecord& t : rep.transfers) {
    CHECK(rel(t.end_us - t.start_us, shared_us) < 1e-9);
  }
  CHECK(rel(rep.prediction.time_us, shared_us) < 1e-9);
  REQUIRE(!rep.links.empty());
  CHECK(rep.links.front().name == "sw->gpu2");
  CHECK(rep.links.front().bytes == 2 * bytes);
}

TEST_CASE("flow: one slow link paces the ring at its bandwidth") {
  // Rank 1's link runs at a quarter: its 2(n-1) chunks in and out take 4x as long. Ranks do not
  // wait for their sends (NCCL's buffered sends), so the others' latency hides behind that link:
  // the time is the slow link's busy time plus at most every step's latency, never a full
  // 2(n-1) x (2 latency + slow chunk) lockstep.
  const int n = GENERATE(3, 4, 8);
  const std::size_t count = static_cast<std::size_t>(n) * 100000;
  const double chunk_bytes = 100000 * 4.0;
  const Prediction fast =
      predict(star(n, kGbps, kLatencyUs), ring_request(OpKind::all_reduce, count));
  const FlowReport slow = simulate_flow(star(n, kGbps, kLatencyUs, 1, kGbps / 4),
                                        ring_request(OpKind::all_reduce, count));
  const double busy_us = 2.0 * (n - 1) * chunk_bytes / (kGbps / 4 * 1e3);
  const double lockstep_us = 2.0 * (n - 1) * (2 * kLatencyUs + chunk_bytes / (kGbps / 4 * 1e3));
  INFO("n=" << n << " slow " << slow.prediction.time_us << " us, busy " << busy_us << " us");
  CHECK(slow.prediction.time_us >= busy_us * (1 - 1e-9));
  CHECK(slow.prediction.time_us <= busy_us + 2.0 * (n - 1) * 2 * kLatencyUs + 1e-6);
  CHECK(slow.prediction.time_us <= lockstep_us * (1 + 1e-9));
  CHECK(slow.prediction.time_us > 3.0 * fast.time_us);
  REQUIRE(!slow.links.empty());
  CHECK(slow.links.front().bytes == 2 * (n - 1) * chunk_bytes);  // the slow link, busiest
  CHECK(slow.links.front().name.find("gpu1") != std::string::npos);
}

TEST_CASE("flow: compressed ring rounds equal the full playback") {
  const auto kind = GENERATE(OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather);
  const int channels = GENERATE(1, 2);
  Request r = ring_request(kind, 8 * 4096 * 3);
  r.software_latency = true;
  r.params.channels = channels;
  r.params.chunk_elements = GENERATE(0, 1024);
  const topo::Topology t = topo::dgx_h100();
  const Prediction full = predict(t, r);
  r.compression = RoundCompression::on;
  const Prediction compressed = predict(t, r);
  INFO(name(kind) << " channels=" << channels << " chunk=" << r.params.chunk_elements);
  // 1e-5: NCCL's NVLink share on dgx-h100 (360 of 370.8 GB/s) is priced as wire bytes
  // (transfer_pricing.h) and SimGrid moves whole bytes: a full playback rounds every piece, a
  // compressed round its k pieces together (at most half a byte each of ~4 KiB pieces).
  CHECK(rel(compressed.time_us, full.time_us) < 1e-5);
}

TEST_CASE("flow: direct all_to_all on a star equals alpha-beta (n-1 flows share each link)") {
  const int n = GENERATE(2, 4, 7);
  Request r = ring_request(OpKind::all_to_all, 50000);
  r.algorithm = "direct";
  const topo::Topology t = star(n, kGbps, kLatencyUs);
  const Prediction flow = predict(t, r);
  r.fidelity = Fidelity::analytic;
  const Prediction analytic = predict(t, r);
  const double expected_us = 2 * kLatencyUs + (n - 1) * 50000 * 4.0 / (kGbps * 1e3);
  CHECK(analytic.model == "alpha-beta");
  CHECK(rel(flow.time_us, expected_us) < 1e-9);
  CHECK(rel(analytic.time_us, expected_us) < 1e-9);
}
