// Programs whose transfers all sit in one step per rank play as one round, by classes of equal
// flows (sim/src/flow.cc, one_transfer_step), even when the schedule has more steps: a direct
// reduce_scatter(_v) exchanges in step 0 and then folds locally in n-1 steps without transfers.
// The bug this holds down: such a program went to SimGrid's dependency playback, one wait_any
// over every active comm per event (h100-cluster-8 reduce_scatter_v 64 MiB: 15 s; 128 ranks: none
// within 30 s), while the same-size direct all_gather_v, one step, played as a round in 0.1 s.
// No timed assertion: the playback's shape (rounds, flows simulated) is the functional proxy.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "twinccl/sim/flow_report.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

constexpr std::size_t kElements = std::size_t{16} << 20;  // 64 MiB of float32

// Rank r's share weighted 1 + r mod 4; equal shares when `even`.
Request direct_call(const topo::Topology& t, OpKind kind, bool even) {
  Request r;
  const auto n = static_cast<std::size_t>(t.gpu_count());
  r.spec.kind = kind;
  r.spec.nranks = static_cast<int>(n);
  r.algorithm = "direct";
  r.fidelity = Fidelity::flow;
  for (std::size_t i = 0; i < n; ++i) {
    r.spec.counts.push_back(even ? kElements / n : kElements / (5 * n / 2) * (1 + i % 4));
  }
  return r;
}

// The least time the receives of a reduce_scatter_v need: rank d gets counts[d] from every peer,
// all of it through the last link of each route into d, at that link's line rate.
double receive_bound_us(const topo::Topology& t, const Request& r) {
  const int n = t.gpu_count();
  double us = 0.0;
  for (int d = 0; d < n; ++d) {
    std::map<topo::LinkId, double> bytes_on;
    for (int s = 0; s < n; ++s) {
      if (s == d) continue;
      bytes_on[t.route(s, d).back()] += 4.0 * static_cast<double>(r.spec.counts[std::size_t(d)]);
    }
    for (const auto& [link, bytes] : bytes_on)
      us = std::max(us, bytes / (t.link(link).bandwidth_gbps * 1e3));
  }
  return us;
}

}  // namespace

TEST_CASE("flow: a direct reduce_scatter_v plays as one round, as SimGrid plays every flow") {
  const topo::Topology t =
      topo::load_topology(GENERATE(as<std::string>{}, "dgx-h100", "h100-cluster-2"));
  Request r = direct_call(t, OpKind::reduce_scatter_v, false);
  const FlowReport classes = simulate_flow(t, r);
  r.aggregate_symmetric_flows = false;  // the reference: every flow in SimGrid
  const FlowReport every = simulate_flow(t, r);
  INFO(t.name() << ": by classes " << classes.prediction.time_us << " us ("
                << classes.simulated_flows << " flows), every flow " << every.prediction.time_us
                << " us (" << every.simulated_flows << ")");
  CHECK_FALSE(classes.step_playback);
  CHECK_FALSE(every.step_playback);
  CHECK(classes.simulated_flows < every.simulated_flows);
  CHECK(std::abs(classes.prediction.time_us / every.prediction.time_us - 1.0) < 1e-6);
}

TEST_CASE("flow: a 128-rank direct reduce_scatter_v is a round of few classes with a sound time") {
  const topo::Topology t = topo::load_topology("h100-cluster-16");
  const Request rs = direct_call(t, OpKind::reduce_scatter_v, false);
  const FlowReport report = simulate_flow(t, rs);
  Request ag = rs;
  ag.spec.kind = OpKind::all_gather_v;  // the same pairs and bytes, every flow reversed
  const double all_gather_us = simulate_flow(t, ag).prediction.time_us;
  const double bound_us = receive_bound_us(t, rs);
  INFO("reduce_scatter_v " << report.prediction.time_us << " us, " << report.simulated_flows
                           << " flows simulated; all_gather_v " << all_gather_us
                           << " us; receive bound " << bound_us << " us");
  CHECK_FALSE(report.step_playback);
  // 128 x 127 = 16,256 comms in the dependency playback (an uneven call: one channel); classes few.
  CHECK(report.simulated_flows <= 64);
  CHECK(report.prediction.time_us >= bound_us);
  CHECK(std::abs(report.prediction.time_us / all_gather_us - 1.0) < 1e-6);
}

TEST_CASE("flow: equal counts play a reduce_scatter_v as the even direct reduce_scatter") {
  const topo::Topology t =
      topo::load_topology(GENERATE(as<std::string>{}, "dgx-h100", "h100-cluster-2"));
  const Request uneven = direct_call(t, OpKind::reduce_scatter_v, true);
  Request even = uneven;
  even.spec.kind = OpKind::reduce_scatter;
  even.spec.counts.clear();
  even.spec.count = uneven.spec.counts.front();
  const FlowReport a = simulate_flow(t, uneven);
  const FlowReport b = simulate_flow(t, even);
  INFO(t.name() << ": reduce_scatter_v " << a.prediction.time_us << " us, reduce_scatter "
                << b.prediction.time_us << " us");
  CHECK_FALSE(a.step_playback);
  CHECK_FALSE(b.step_playback);
  CHECK(std::abs(a.prediction.time_us / b.prediction.time_us - 1.0) < 0.01);
}
