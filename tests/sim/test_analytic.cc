// Analytic fidelity: NCCL model numbers, busbw from perf_math, protocol choice, agreement with
// the flow model where nothing contends, and every bad input's error.
#include <catch2/catch.hpp>
#include <cmath>

#include "sim_topologies.h"
#include "twinccl/errors.h"
#include "twinccl/perf_math.h"
#include "twinccl/sim/flow_report.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;
using namespace twinccl::sim::testing;

namespace {
Request analytic(OpKind kind, std::size_t count) {
  Request r;
  r.spec.kind = kind;
  r.spec.count = count;
  return r;
}
bool registered(OpKind kind, std::string_view algorithm) {
  for (const Algorithm* a : algorithms_for(kind)) {
    if (a->name() == algorithm) return true;
  }
  return false;
}
constexpr std::size_t kGiB = std::size_t{1} << 30;
}  // namespace

TEST_CASE("analytic: ring Simple on dgx-h100 is NCCL's 12 channels x 30 GB/s plus its latency") {
  Request r = analytic(OpKind::all_reduce, kGiB / 4);
  r.algorithm = "ring";
  r.protocol = Protocol::simple;
  const Prediction p = predict(topo::dgx_h100(), r);
  CHECK(p.channels == 12);
  CHECK(p.model == "nccl");
  // latency 8.4 + 14 x 3.4 us, + 14 x 3.4 for the second slice of each step in each of the 6
  // loops of 8 x 2 MiB chunks a channel (1 GiB / 12 channels = 85.33 MiB: 5 full loops and a
  // sixth, 1/3 full, of 5.33 MiB / 8 ranks = 2/3 MiB pieces; sim/src/ring_slice_sync.cc); algbw =
  // 360 x 8 / 14 GB/s
  const double expected_us =
      8.4 + 14 * 3.4 + 6 * 14 * 3.4 + static_cast<double>(kGiB) / (1000.0 * 360.0 * 8 / 14);
  CHECK(p.time_us == Approx(expected_us).epsilon(1e-12));
  CHECK(p.busbw_gbps < 360.0);
  CHECK(p.busbw_gbps > 335.0);
}

TEST_CASE("analytic: busbw is perf_math's algbw x factor for every prediction") {
  const auto kind = GENERATE(OpKind::all_reduce, OpKind::all_gather, OpKind::reduce_scatter,
                             OpKind::broadcast, OpKind::all_to_all);
  const std::size_t count = GENERATE(0, 1, 1023, 1 << 22);
  for (const Prediction& p : compare_all(topo::dgx_h100(), analytic(kind, count))) {
    INFO(name(kind) << " " << p.algorithm << " " << name(p.protocol) << " count=" << count);
    CHECK(p.time_us >= 0.0);
    if (p.time_us == 0.0) {  // nothing to move and no latency (alpha-beta of zero bytes)
      CHECK(p.algbw_gbps == 0.0);
      continue;
    }
    const double algbw = algbw_bytes(kind, count, DataType::float32, 8) / (p.time_us * 1e-6) / 1e9;
    CHECK(p.algbw_gbps == Approx(algbw).epsilon(1e-12));
    CHECK(p.busbw_gbps == Approx(algbw * busbw_factor(kind, 8)).epsilon(1e-12));
  }
}

TEST_CASE("analytic: dgx-h100 picks LL for small all_reduce and a bandwidth protocol for large") {
  const Prediction small = predict(topo::dgx_h100(), analytic(OpKind::all_reduce, 256));
  CHECK(small.protocol == Protocol::ll);
  const Prediction large = predict(topo::dgx_h100(), analytic(OpKind::all_reduce, kGiB / 4));
  CHECK(large.protocol != Protocol::ll);
  const std::vector<Prediction> all =
      compare_all(topo::dgx_h100(), analytic(OpKind::all_reduce, 256));
  REQUIRE(all.size() >= 3);
  for (std::size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].time_us <= all[i].time_us);
  CHECK(all.front().time_us == small.time_us);
}

TEST_CASE("analytic: nvls is refused on pcie-4gpu and offered on dgx-h100") {
  if (!registered(OpKind::all_reduce, "nvls")) return;
  Request r = analytic(OpKind::all_reduce, 1 << 20);
  for (const Prediction& p : compare_all(topo::pcie_4gpu(), r)) CHECK(p.algorithm != "nvls");
  r.algorithm = "nvls";
  CHECK_THROWS_AS(predict(topo::pcie_4gpu(), r), InvalidArgument);
  CHECK_THROWS_WITH(predict(topo::pcie_4gpu(), r),
                    Catch::Contains("NVLS-capable") && Catch::Contains("applicable: ring"));
  CHECK(predict(topo::dgx_h100(), r).algorithm == "nvls");
}

TEST_CASE("analytic and flow agree within 2% for a large ring all_reduce without contention") {
  // 8 Hopper GPUs on one NVSwitch at 18 x 20 = 360 GB/s: NCCL's 12 channels x 30 GB/s exactly.
  const topo::Topology t = star(8, 360.0, 0.2, -1, 0.0, topo::GpuArch::hopper);
  const std::size_t count = GENERATE(kGiB / 4, kGiB / 16);
  Request r = analytic(OpKind::all_reduce, count);
  r.algorithm = "ring";
  r.protocol = Protocol::simple;
  const Prediction a = predict(t, r);
  r.fidelity = Fidelity::flow;
  const Prediction f = predict(t, r);
  INFO("analytic " << a.time_us << " us, flow " << f.time_us << " us");
  CHECK(std::abs(a.time_us - f.time_us) / a.time_us < 0.02);
}

TEST_CASE("analytic: a 8192-rank cluster ring answers in closed form") {
  const topo::Topology t = topo::h100_cluster(1024);
  Request r = analytic(OpKind::all_reduce, kGiB / 4);
  r.algorithm = "ring";
  const Prediction p = predict(t, r);
  CHECK(p.nranks == 8192);
  // 16382 steps, 2 x 1023 of them across the network: latency dominates (NCCL would pick tree).
  // NCCL's ring plateau x1.4 (Simple all_reduce across nodes); 8 channels, one per NIC, at NCCL's
  // inter speed 48 GB/s (was 12 x 30 = 360 and no plateau, before NCCL's multi-node rules).
  const double latency_us = 1.4 * (8.4 + (16382 - 2046) * 3.4 + 2046 * 14.0);
  const double algbw = 384.0 * 8192 / 16382;
  if (r.protocol == std::nullopt && p.protocol == Protocol::simple) {
    CHECK(p.time_us == Approx(latency_us + static_cast<double>(kGiB) / (1000 * algbw)));
  }
  r.protocol = Protocol::simple;
  CHECK(predict(t, r).time_us == Approx(latency_us + static_cast<double>(kGiB) / (1000 * algbw)));
}

TEST_CASE("sim requests: bad input names the field, the value and what applies") {
  const topo::Topology t = topo::dgx_h100();
  Request r = analytic(OpKind::all_reduce, 1024);
  r.spec.nranks = 9;
  CHECK_THROWS_WITH(predict(t, r), Catch::Contains("spec.nranks=9") && Catch::Contains("1..8"));
  r.spec.nranks = -1;
  CHECK_THROWS_AS(predict(t, r), InvalidArgument);
  r.spec.nranks = 0;
  r.algorithm = "nope";
  CHECK_THROWS_WITH(predict(t, r), Catch::Contains("'nope'") && Catch::Contains("ring"));
  r.algorithm = "ring";
  r.params.channels = -2;
  CHECK_THROWS_WITH(predict(t, r), Catch::Contains("params.channels=-2"));
  // Above NCCL's MAXCHANNELS: refused at once (the flow model ran for minutes at 128).
  r.params.channels = 1024;
  r.fidelity = Fidelity::flow;
  CHECK_THROWS_WITH(predict(t, r),
                    Catch::Contains("params.channels=1024") && Catch::Contains("0..64"));
  r.fidelity = Fidelity::analytic;
  r.params.channels = 64;
  CHECK_NOTHROW(predict(t, r));  // the cap itself is allowed
  r.params.channels = 0;
  if (registered(OpKind::all_reduce, "nvls")) {
    r.algorithm = "nvls";
    r.protocol = Protocol::ll;
    CHECK_THROWS_WITH(predict(t, r), Catch::Contains("protocol LL") && Catch::Contains("Simple"));
  }
  Request a2a = analytic(OpKind::all_to_all, 1024);
  a2a.protocol = Protocol::ll128;
  CHECK_THROWS_WITH(predict(t, a2a), Catch::Contains("LL128"));
  CHECK_THROWS_AS(parse_protocol("LL64"), InvalidArgument);
  CHECK(parse_protocol("ll128") == Protocol::ll128);
  CHECK(parse_fidelity("FLOW") == Fidelity::flow);
  CHECK_THROWS_AS(parse_fidelity("packet"), InvalidArgument);
  Request unnamed = analytic(OpKind::all_reduce, 1024);
  CHECK_THROWS_AS(simulate_flow(t, unnamed), InvalidArgument);
}

TEST_CASE("analytic: a lone GPU without links (torus-1x1) predicts a finite time, not inf") {
  // torus_2d(1, 1) drops its wrap-around self-links: the GPU has no link, so no rate; its
  // one-rank collectives move nothing off the GPU (the flow model says 0), never bytes / 0.
  const topo::Topology lone = topo::torus_2d(1, 1);
  const auto kind = GENERATE(OpKind::all_reduce, OpKind::all_gather, OpKind::reduce_scatter,
                             OpKind::broadcast, OpKind::reduce);
  const Request r = analytic(kind, std::size_t{1} << 20);
  for (const Prediction& p : compare_all(lone, r)) {
    INFO(name(kind) << " " << p.algorithm << " " << name(p.protocol));
    CHECK(std::isfinite(p.time_us));
    CHECK(p.time_us >= 0.0);
  }
  const Prediction chosen = predict(lone, r);
  CHECK(std::isfinite(chosen.time_us));
  // A GPU of a known arch copies through its device memory (NCCL's one-rank path, a read and a
  // write at 0.9 x HBM): 1 MiB on an H100 (3350 GB/s) at 1507.5 GB/s (tests/sim/test_one_rank.cc).
  Request one = analytic(OpKind::all_reduce, std::size_t{1} << 18);
  one.spec.nranks = 1;
  one.algorithm = "ring";
  one.protocol = Protocol::simple;
  CHECK(predict(topo::dgx_h100(), one).time_us ==
        Approx(static_cast<double>(1 << 20) / (1000.0 * 3350.0 * 0.9 / 2.0)).epsilon(1e-9));
}
