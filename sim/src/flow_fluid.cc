// Rounds of flows played without SimGrid: SimGrid CM02's sharing, computed on flow classes.
//
// How it works. A round starts all its flows together (flow_simgrid.cc's play_round); flow_classes
// lumps the flows that max-min sharing treats alike. Each class then follows SimGrid 3.32's CM02
// rules (src/surf/network_cm02.cpp, src/kernel/lmm/maxmin.cpp):
// * a flow starts at its delay, pays its route's latency first (its variable is disabled meanwhile)
//   and then shares with penalty = route latency (1 when the route has none), so a link's rate is
//   shared in inverse proportion to route latency; bound = its route's slowest link when the route
//   has no latency (TCP-gamma 0 removes the bound otherwise);
// * rates: SimGrid's saturation loop. level = min over resources of remaining / usage (usage:
//   sum of multiplicity / penalty; a fatpipe: the largest 1 / penalty); the flows of the resources
//   at that level get level / penalty (or, first, their bound where bound x penalty is below the
//   level); resources lose what those flows take; repeat while a resource is left;
// * events: a class's latency ending or its bytes ending; rates are solved again at each.
// A resource class stands for all its resources: each carries the same flows, so one remaining
// and one usage serve all. 16 GPUs all_to_all on h100-cluster-2: 1920 transfers, a handful of
// classes, one event loop of a few steps instead of SimGrid's 1920 comms.
#include "flow_fluid.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "twinccl/errors.h"

namespace twinccl::sim::detail {
namespace {

// SimGrid's settings in flow_simgrid.cc (maxmin/precision, surf/precision).
constexpr double kMaxminPrecision = 1e-5;
constexpr double kSurfPrecision = 1e-12;

double penalty(const FluidFlow& f) { return f.latency_s > 0.0 ? f.latency_s : 1.0; }

// Rates (bytes/s per flow) of the active classes; SimGrid's maxmin_solve on the quotient.
std::vector<double> solve(const FlowClasses& q, const std::vector<bool>& active) {
  const std::size_t nf = q.flows.size(), nr = q.resources.size();
  std::vector<double> rate(nf, 0.0), remaining(nr, 0.0), usage(nr, 0.0);
  std::vector<bool> fixed(nf, false), light(nr, false);
  const auto fatpipe_usage = [&](std::size_t r) {
    double u = 0.0;
    for (const auto& [f, n] : q.resources[r].flows) {
      const auto uf = static_cast<std::size_t>(f);
      if (active[uf] && !fixed[uf]) u = std::max(u, 1.0 / penalty(q.flows[uf].flow));
    }
    return u;
  };
  for (std::size_t r = 0; r < nr; ++r) {
    const ClassResource& cr = q.resources[r];
    remaining[r] = cr.resource.bandwidth_bytes_per_s;
    if (cr.resource.fatpipe) {
      usage[r] = fatpipe_usage(r);
    } else {
      for (const auto& [f, n] : cr.flows) {
        const auto uf = static_cast<std::size_t>(f);
        if (active[uf]) usage[r] += n * q.flows[uf].flow.multiplicity / penalty(q.flows[uf].flow);
      }
    }
    light[r] = usage[r] > 0.0 && remaining[r] > remaining[r] * kMaxminPrecision;
  }
  for (;;) {
    double level = -1.0;
    for (std::size_t r = 0; r < nr; ++r) {
      if (light[r] && (level < 0.0 || remaining[r] / usage[r] < level)) {
        level = remaining[r] / usage[r];
      }
    }
    if (level < 0.0) break;
    // The unfixed active flows of the resources at the level (ties within rounding: SimGrid's
    // resources of one class are separate constraints with the same value).
    std::vector<std::size_t> set;
    std::vector<bool> in_set(nf, false);
    for (std::size_t r = 0; r < nr; ++r) {
      if (!light[r] || remaining[r] / usage[r] > level * (1.0 + 1e-12)) continue;
      for (const auto& [f, n] : q.resources[r].flows) {
        const auto uf = static_cast<std::size_t>(f);
        if (active[uf] && !fixed[uf] && !in_set[uf]) {
          in_set[uf] = true;
          set.push_back(uf);
        }
      }
    }
    double min_bound = -1.0;
    for (std::size_t f : set) {
      const double b = q.flows[f].bound_bytes_per_s * penalty(q.flows[f].flow);
      if (q.flows[f].bound_bytes_per_s > 0.0 && b < level) {
        min_bound = min_bound < 0.0 ? b : std::min(min_bound, b);
      }
    }
    for (std::size_t f : set) {
      const double p = penalty(q.flows[f].flow);
      if (min_bound < 0.0) {
        rate[f] = level / p;
      } else if (std::fabs(min_bound - q.flows[f].bound_bytes_per_s * p) < kMaxminPrecision) {
        rate[f] = q.flows[f].bound_bytes_per_s;
      } else {
        continue;
      }
      fixed[f] = true;
      for (const auto& [r, k] : q.flows[f].resources) {
        const auto ur = static_cast<std::size_t>(r);
        const ClassResource& cr = q.resources[ur];
        int n = 0;  // flows of class f on one resource of class r
        for (const auto& [g, m] : cr.flows) {
          if (static_cast<std::size_t>(g) == f) n = m;
        }
        const double bound = cr.resource.bandwidth_bytes_per_s;
        if (!cr.resource.fatpipe) {
          remaining[ur] -= n * q.flows[f].flow.multiplicity * rate[f];
          if (remaining[ur] < bound * kMaxminPrecision) remaining[ur] = 0.0;
          usage[ur] -= n * q.flows[f].flow.multiplicity / p;
          if (usage[ur] < kMaxminPrecision) usage[ur] = 0.0;
        } else {
          usage[ur] = fatpipe_usage(ur);
        }
        light[ur] =
            light[ur] && usage[ur] > kMaxminPrecision && remaining[ur] > bound * kMaxminPrecision;
      }
    }
  }
  return rate;
}

}  // namespace

FlowTimes play_classes(const FlowClasses& q) {
  const std::size_t nf = q.flows.size();
  FlowTimes times;
  times.start_s.assign(nf, 0.0);
  times.end_s.assign(nf, 0.0);
  std::vector<double> remains(nf, 0.0), active_at(nf, 0.0);
  std::vector<bool> active(nf, false), done(nf, false);
  std::size_t left = nf;
  for (std::size_t f = 0; f < nf; ++f) {
    const FluidFlow& fl = q.flows[f].flow;
    times.start_s[f] = fl.delay_s;
    active_at[f] = fl.delay_s + std::max(0.0, fl.latency_s);
    remains[f] = fl.bytes;
    if (fl.bytes <= 0.0 || q.flows[f].resources.empty()) {  // nothing to share: the latency only
      times.end_s[f] = active_at[f];
      done[f] = true;
      --left;
    }
  }
  double now = 0.0;
  std::vector<double> rate(nf, 0.0);
  bool changed = true;
  while (left > 0) {
    for (std::size_t f = 0; f < nf; ++f) {
      if (!done[f] && !active[f] && active_at[f] <= now + kSurfPrecision) {
        active[f] = true;
        changed = true;
      }
    }
    if (changed) rate = solve(q, active);
    changed = false;
    double next = std::numeric_limits<double>::infinity();
    for (std::size_t f = 0; f < nf; ++f) {
      if (done[f]) continue;
      if (!active[f]) {
        next = std::min(next, active_at[f]);
      } else if (rate[f] > 0.0) {
        next = std::min(next, now + remains[f] / rate[f]);
      }
    }
    if (!std::isfinite(next)) {
      throw InternalError("flow playback by classes: " + std::to_string(left) +
                          " flow classes get no bandwidth (a link of rate 0?)");
    }
    const double dt = next - now;
    for (std::size_t f = 0; f < nf; ++f) {
      if (done[f] || !active[f]) continue;
      const double end_s = rate[f] > 0.0 ? now + remains[f] / rate[f] : next + 1.0;
      remains[f] -= rate[f] * dt;
      if (end_s <= next + kSurfPrecision || remains[f] < kMaxminPrecision * kSurfPrecision) {
        times.end_s[f] = next;
        done[f] = true;
        active[f] = false;
        changed = true;
        --left;
      }
    }
    now = next;
  }
  return times;
}

std::optional<FlowTimes> play_rounds_fluid(const FlowProgram& program, std::size_t max_classes,
                                           std::size_t* classes_played) {
  FlowTimes times;
  std::size_t played = 0;
  times.start_s.assign(program.transfers.size(), 0.0);
  times.end_s.assign(program.transfers.size(), 0.0);
  for (const FlowRound& round : program.rounds) {
    const RoundFlows flows = round_flows(program, round.transfers);
    const FlowClasses classes = flow_classes(flows, max_classes);
    if (!classes.valid) return std::nullopt;
    played += classes.flows.size();
    const FlowTimes by_class = play_classes(classes);
    for (std::size_t i = 0; i < round.transfers.size(); ++i) {
      const auto f = static_cast<std::size_t>(flows.flow_of_transfer[i]);
      const auto c = static_cast<std::size_t>(classes.flow_class[f]);
      const auto t = static_cast<std::size_t>(round.transfers[i]);
      times.start_s[t] = by_class.start_s[c];
      times.end_s[t] = by_class.end_s[c];
    }
  }
  if (classes_played != nullptr) *classes_played = played;
  return times;
}

}  // namespace twinccl::sim::detail
