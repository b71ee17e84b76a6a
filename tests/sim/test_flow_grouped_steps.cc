// Grouped steps (sim/src/transfer_pricing.cc, flow_simgrid.cc, replay_simgrid.cc): bruck and
// halving_doubling run one grouped send/recv per step, so a send moves once its receiver reached
// that step and a rank leaves a step when its sends ended too. The bug this holds down: flow
// played bruck's sends buffered, as NCCL's kernels' are, so a rank's next step's sends shared its
// port with its unfinished ones and a receiver's port with the next step's data; dgx-h100 bruck
// all_gather_v, ranks weighted 1 + r mod 4, took 331.5 us in flow against 208.6 in analytic, so the
// tuner's pick (bruck) was the slowest of three in flow. By hand (u = 1/20 of 64 MiB, 370.8 GB/s
// per NVLink port): the steps' largest messages are 4u, 7u and 10u, and they form a chain (rank 3
// -> 2 sends block 3; 2 -> 0 sends blocks 2-3; 0 -> 4 sends blocks 0-3): 21u = 190 us plus 3 hop
// latencies and the base, 208.6 us, where direct needs 7 x 4u = 28u through rank 3's port.
// Also: channels of a grouped algorithm keep each rank on its own GPU (rotated over a mesh's ring
// orders, the even call's peers changed: mi300x-8 even bruck 542.9 us against 1241.9).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "../../sim/src/flow_program.h"
#include "replay_traces.h"
#include "twinccl/sim/flow_report.h"
#include "twinccl/sim/replay.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

constexpr std::size_t kElements = std::size_t{16} << 20;  // 64 MiB of float32

double rel(double a, double b) { return std::abs(a / b - 1.0); }

// all_gather_v with rank r weighted 1 + r mod 4 (or equal counts), or the even all_gather.
Request gather_call(const topo::Topology& t, OpKind kind, bool skewed, std::string algorithm) {
  Request r;
  const auto n = static_cast<std::size_t>(t.gpu_count());
  r.spec.kind = kind;
  r.spec.nranks = static_cast<int>(n);
  r.algorithm = std::move(algorithm);
  if (kind == OpKind::all_gather) {
    r.spec.count = kElements / n;
  } else {
    for (std::size_t i = 0; i < n; ++i)
      r.spec.counts.push_back(skewed ? kElements / (5 * n / 2) * (1 + i % 4) : kElements / n);
  }
  return r;
}

double flow_us(const topo::Topology& t, Request r) {
  r.fidelity = Fidelity::flow;
  return predict(t, r).time_us;
}

}  // namespace

TEST_CASE("grouped steps: a send waits for its receiver's step, a rank for its sends") {
  // 3 hosts, each with one full-duplex port (1e9 B/s) to a switch; every transfer 1e6 B (1 ms).
  // Rank 0: step 0 sends A to 1, step 1 sends C to 2. Rank 1: step 0 receives A, step 1 B.
  // Rank 2: step 0 sends B to 1, step 1 receives C. Grouped: A 0-1 ms; B waits for rank 1's
  // step 1 (1-2 ms); C waits for rank 2's step 1, which waits for its send B: 2-3 ms. Buffered:
  // all three start at once, A and B share rank 1's port, A and C rank 0's: all end at 2 ms.
  detail::FlowProgram p;
  p.nranks = 3;
  for (int h = 0; h < 3; ++h) p.links.push_back({.topology_link = h, .bandwidth_bytes_per_s = 1e9});
  const auto route = [&](int a, int b) {
    p.routes.push_back({.src = a, .dst = b, .hops = {{a, true}, {b, false}}});
    return static_cast<int>(p.routes.size()) - 1;
  };
  const bool grouped = GENERATE(true, false);
  const auto transfer = [&](int a, int b, int step) {
    p.transfers.push_back({.route = route(a, b),
                           .bytes = 1e6,
                           .step = step,
                           .src_rank = a,
                           .dst_rank = b,
                           .grouped = grouped});
    return static_cast<int>(p.transfers.size()) - 1;
  };
  const int a = transfer(0, 1, 0), b = transfer(2, 1, 0), c = transfer(0, 2, 1);
  p.rank_steps = {{{a}, {c}}, {{a}, {b}}, {{b}, {c}}};
  const detail::FlowTimes times = detail::play_in_child(p);
  const std::vector<double> start_ms = {times.start_s[0] * 1e3, times.start_s[1] * 1e3,
                                        times.start_s[2] * 1e3};
  const std::vector<double> end_ms = {times.end_s[0] * 1e3, times.end_s[1] * 1e3,
                                      times.end_s[2] * 1e3};
  INFO((grouped ? "grouped" : "buffered")
       << ": A " << start_ms[0] << "-" << end_ms[0] << " ms, B " << start_ms[1] << "-" << end_ms[1]
       << ", C " << start_ms[2] << "-" << end_ms[2]);
  const std::vector<double> want_start =
      grouped ? std::vector<double>{0, 1, 2} : std::vector<double>{0, 0, 0};
  const std::vector<double> want_end =
      grouped ? std::vector<double>{1, 2, 3} : std::vector<double>{2, 2, 2};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(start_ms[i] == Approx(want_start[i]).margin(1e-9));
    CHECK(end_ms[i] == Approx(want_end[i]).epsilon(1e-9));
  }
}

TEST_CASE("grouped steps: skewed bruck all_gather_v takes its chain, as alpha-beta prices it") {
  const topo::Topology t = topo::load_topology(GENERATE(as<std::string>{}, "dgx-h100", "dgx-a100"));
  const Request r = gather_call(t, OpKind::all_gather_v, true, "bruck");
  const double analytic = predict(t, r).time_us;
  const FlowReport rep = [&] {
    Request f = r;
    f.fidelity = Fidelity::flow;
    return simulate_flow(t, f, {.record_transfers = true});
  }();
  // The chain 3 -> 2 (block 3), 2 -> 0 (blocks 2, 3), 0 -> 4 (blocks 0-3), each message whole
  // before it is forwarded, through one GPU port (every GPU has one link to the NVSwitch).
  const auto bytes = [&](int first, int last) {
    double sum = 0.0;
    for (int b = first; b <= last; ++b) sum += 4.0 * static_cast<double>(r.spec.counts[size_t(b)]);
    return sum;
  };
  const double port_gbps = t.link(t.route(0, 1).front()).bandwidth_gbps;
  const double chain_us = (bytes(3, 3) + bytes(2, 3) + bytes(0, 3)) / (port_gbps * 1e3);
  INFO(t.name() << ": chain " << chain_us << " us, analytic " << analytic << ", flow "
                << rep.prediction.time_us);
  CHECK(rep.prediction.time_us >= chain_us);
  CHECK(rel(rep.prediction.time_us, analytic) < 0.05);
  // No rank runs two steps' sends, or two steps' receives, at once on its port.
  for (const TransferRecord& x : rep.transfers) {
    for (const TransferRecord& y : rep.transfers) {
      if (x.step >= y.step || (x.src != y.src && x.dst != y.dst)) continue;
      CAPTURE(x.src, x.dst, x.step, x.start_us, x.end_us, y.src, y.dst, y.step, y.start_us);
      CHECK(y.start_us >= x.end_us - 1e-6);
    }
  }
}

TEST_CASE("grouped steps: bruck agrees between flow and analytic where no link is shared") {
  const std::string preset =
      GENERATE(as<std::string>{}, "dgx-h100", "mi300x-8", "h100-cluster-2", "h100-cluster-4");
  const topo::Topology t = topo::load_topology(preset);
  const OpKind kind = GENERATE(OpKind::all_gather, OpKind::all_gather_v);
  const Request r = gather_call(t, kind, true, "bruck");
  const double analytic = predict(t, r).time_us;
  const double flow = flow_us(t, r);
  INFO(preset << " " << name(kind) << ": analytic " << analytic << " us, flow " << flow);
  CHECK(rel(flow, analytic) < 0.05);
}

TEST_CASE("grouped steps: equal counts price bruck all_gather_v as the even all_gather") {
  const std::string preset = GENERATE(as<std::string>{}, "dgx-h100", "mi300x-8", "h100-cluster-2");
  const topo::Topology t = topo::load_topology(preset);
  const Request even = gather_call(t, OpKind::all_gather, false, "bruck");
  const Request equal = gather_call(t, OpKind::all_gather_v, false, "bruck");
  const double even_analytic = predict(t, even).time_us, equal_analytic = predict(t, equal).time_us;
  const double even_flow = flow_us(t, even), equal_flow = flow_us(t, equal);
  INFO(preset << ": analytic " << even_analytic << " / " << equal_analytic << " us, flow "
              << even_flow << " / " << equal_flow << " (all_gather / all_gather_v)");
  CHECK(rel(equal_analytic, even_analytic) < 0.01);
  CHECK(rel(equal_flow, even_flow) < 0.01);
}

TEST_CASE("grouped steps: the tuner's skewed all_gather_v pick is the fastest in flow too") {
  const std::string preset =
      GENERATE(as<std::string>{}, "dgx-h100", "dgx-a100", "mi300x-8", "h100-cluster-2",
               "h100-cluster-3", "h100-cluster-4", "h100-cluster-8");
  const topo::Topology t = topo::load_topology(preset);
  const Request r = gather_call(t, OpKind::all_gather_v, true, "");
  std::string chosen, fastest;
  double chosen_us = 0.0, fastest_us = 0.0;
  for (const Prediction& a : compare_all(t, r)) {
    Request f = r;
    f.algorithm = a.algorithm;
    f.protocol = a.protocol;
    const double us = flow_us(t, f);
    if (a.tuner_choice) chosen = a.algorithm, chosen_us = us;
    if (fastest.empty() || us < fastest_us) fastest = a.algorithm, fastest_us = us;
  }
  INFO(preset << ": tuner " << chosen << " " << chosen_us << " us in flow, fastest " << fastest
              << " " << fastest_us);
  REQUIRE_FALSE(chosen.empty());
  CHECK(chosen_us <= fastest_us * (1.0 + 1e-6));
}

TEST_CASE("grouped steps: a one-call replay of bruck all_gather_v plays as flow") {
  const std::string preset = GENERATE(as<std::string>{}, "dgx-h100", "h100-cluster-2");
  const topo::Topology t = topo::load_topology(preset);
  const Request r = gather_call(t, OpKind::all_gather_v, true, "bruck");
  testing::TraceBuilder b(t.gpu_count());
  std::vector<int> all(static_cast<std::size_t>(t.gpu_count()));
  std::iota(all.begin(), all.end(), 0);
  b.blocking_all(b.comm("world", all), OpKind::all_gather_v, 0);
  Trace trace = b.trace();
  for (RankTrace& rt : trace.ranks) rt.ops.front().counts = r.spec.counts;
  ReplayOptions options;
  options.algorithm = "bruck";
  const ReplayResult res = replay(trace, t, options);
  REQUIRE(res.ops.size() == 1);
  const double flow = flow_us(t, r), analytic = predict(t, r).time_us;
  INFO(preset << ": replay " << res.ops.front().time_us() << " us, flow " << flow << ", analytic "
              << analytic);
  CHECK(rel(res.ops.front().time_us(), flow) < 0.01);
  CHECK(rel(res.ops.front().time_us(), analytic) < 0.05);
}
