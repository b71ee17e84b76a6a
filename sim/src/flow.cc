// Flow fidelity: price the call, play it in SimGrid, and read time, link loads and transfers.
//
// How it works. The call is priced and lowered to flows by the one owner of pricing
// (transfer_pricing.h: NCCL's latencies, protocol wire bytes, channels on rails, link shares,
// NVLS switch flows), exactly as the trace replay prices it. time = the call's fixed latency
// (once) + the playback's makespan; a ring on more than 64 ranks plays compressed rounds, timed by
// the slowest path through them (ring_path_s). Rounds play one flow group per class of identical
// independent groups (flow_symmetry.cc; aggregate_symmetric_flows false: every flow). Link loads: a
// transfer's wire bytes on every link direction of its route (both directions together on
// half-duplex links); busy time = the bytes it played (wire bytes x link share) / the link's rate;
// utilisation = busy time / collective time.
#include <algorithm>
#include <cmath>
#include <map>

#include "flow_build.h"
#include "flow_fluid.h"
#include "model.h"
#include "transfer_pricing.h"
#include "twinccl/errors.h"

namespace twinccl::sim::detail {
namespace {

constexpr int kCompressAboveRanks = 64;

// Compressed ring: the time of the slowest path through the rounds, at least the busiest edge's
// time on the wire. Ranks do not wait for their sends (flow_simgrid.cc), so the last rank finishes
// after the edges its data crossed: at global step i the path takes ring edge (r - steps + i) mod
// n, costing that edge's slowest flow in the step's round. Symmetric rings (every edge alike) give
// sum(count x round time), as lockstep. A path crosses a slow edge (a node boundary) in only some
// steps, but every step's data crosses every edge: the edge is busy for the sum over the steps of
// its flows' time without their route latency (bandwidth and contention only), which bounds the
// ring from below as NCCL's bus bandwidth does (was -5.5% at 1 GiB on 2 H100 nodes, -45% on 2 B200
// nodes, whose NVLink is twice the NICs).
double ring_path_s(const FlowProgram& program, const FlowTimes& times) {
  const auto n = static_cast<long long>(program.nranks);
  const std::size_t nn = static_cast<std::size_t>(n);
  std::vector<std::vector<double>> prefix(program.rounds.size());  // over the cycle twice
  std::vector<double> total(program.rounds.size(), 0.0);
  std::vector<std::vector<double>> wire(program.rounds.size());  // [round][edge] busy time
  for (std::size_t i = 0; i < program.rounds.size(); ++i) {
    std::vector<double> cost(nn, 0.0);
    wire[i].assign(nn, 0.0);
    for (int t : program.rounds[i].transfers) {
      const auto ut = static_cast<std::size_t>(t);
      const FlowTransfer& tr = program.transfers[ut];
      const auto e = static_cast<std::size_t>(tr.src_rank);
      cost[e] = std::max(cost[e], times.end_s[ut]);
      const double latency_s = program.routes[static_cast<std::size_t>(tr.route)].latency_s;
      wire[i][e] = std::max(wire[i][e], times.end_s[ut] - times.start_s[ut] - latency_s);
    }
    prefix[i].assign(2 * nn + 1, 0.0);
    for (std::size_t k = 0; k < 2 * nn; ++k) prefix[i][k + 1] = prefix[i][k] + cost[k % nn];
    total[i] = prefix[i][nn];
  }
  long long steps = 0;
  for (const auto& run : program.round_sequence) steps += std::llround(run.second);
  double longest = 0.0;
  for (long long r = 0; r < n; ++r) {
    long long at = 0;
    double sum = 0.0;
    for (const auto& [round, count] : program.round_sequence) {
      const long long len = std::llround(count);
      const auto start = static_cast<std::size_t>((((r - steps + at) % n) + n) % n);
      const auto rest = static_cast<std::size_t>(len % n);
      const auto& pre = prefix[static_cast<std::size_t>(round)];
      sum += static_cast<double>(len / n) * total[static_cast<std::size_t>(round)] +
             (pre[start + rest] - pre[start]);
      at += len;
    }
    longest = std::max(longest, sum);
  }
  for (std::size_t e = 0; e < nn; ++e) {
    double busy = 0.0;
    for (const auto& [round, count] : program.round_sequence) {
      busy += count * wire[static_cast<std::size_t>(round)][e];
    }
    longest = std::max(longest, busy);
  }
  return longest;
}

}  // namespace

bool one_transfer_step(const FlowProgram& program) {
  if (program.rank_steps.empty()) return false;
  for (const auto& steps : program.rank_steps) {
    const auto moving = std::count_if(steps.begin(), steps.end(),
                                      [](const std::vector<int>& step) { return !step.empty(); });
    if (moving > 1) return false;
  }
  return true;
}

std::vector<LinkLoad> link_loads(const topo::Topology& topology, const FlowProgram& program,
                                 const std::vector<double>& transfer_repeats, double time_s) {
  // (program link, forward) -> (wire bytes, played bytes)
  std::map<std::pair<int, bool>, std::pair<double, double>> bytes;
  for (std::size_t t = 0; t < program.transfers.size(); ++t) {
    const FlowTransfer& tr = program.transfers[t];
    for (const FlowHop& hop : program.routes[static_cast<std::size_t>(tr.route)].hops) {
      const bool dir =
          program.links[static_cast<std::size_t>(hop.link)].full_duplex ? hop.forward : true;
      auto& [wire, played] = bytes[{hop.link, dir}];
      wire += tr.bytes / tr.played_per_wire_byte * transfer_repeats[t] * tr.copies;
      played += tr.bytes * transfer_repeats[t] * tr.copies;
    }
  }
  std::vector<LinkLoad> loads;
  for (const auto& [key, b] : bytes) {
    const auto& [wire, played] = b;
    const FlowLink& fl = program.links[static_cast<std::size_t>(key.first)];
    const topo::Link& l = topology.link(fl.topology_link);
    const std::string& a = topology.vertex(l.a).name;
    const std::string& z = topology.vertex(l.b).name;
    LinkLoad load;
    load.name = !fl.full_duplex ? a + "<->" + z : key.second ? a + "->" + z : z + "->" + a;
    load.link = fl.topology_link;
    load.bytes = wire;
    load.busy_us = fl.fatpipe ? 0.0 : played / fl.bandwidth_bytes_per_s * 1e6;
    load.utilisation = time_s > 0.0 ? load.busy_us / (time_s * 1e6) : 0.0;
    loads.push_back(std::move(load));
  }
  std::stable_sort(loads.begin(), loads.end(),
                   [](const LinkLoad& x, const LinkLoad& y) { return x.busy_us > y.busy_us; });
  return loads;
}

FlowReport flow(const topo::Topology& topology, const Resolved& r, const FlowOptions& options) {
  const Tuner tuner(topology, r.spec.nranks, r.params.ranks_per_node, r.software_latency,
                    r.nccl_version);
  const PricedCall priced = price_call(tuner, r);
  FlowProgram program;
  program.nranks = r.spec.nranks;
  RouteTable routes(topology, program, platform_links(topology, r.software_latency));
  const bool compress =
      r.compression == RoundCompression::on ||
      (r.compression == RoundCompression::automatic && r.spec.nranks > kCompressAboveRanks);
  // A uniform direct all_to_all played by classes: its channel pieces folded (flow_direct.cc).
  const bool fold = r.aggregate_symmetric_flows && foldable_direct(r, priced);
  check_direct_size(r, priced, fold);
  const CallFlows flows =
      fold ? add_folded_direct_flows(tuner, r, priced, routes, program)
           : add_call_flows(tuner, r, priced, compress ? RingForm::rounds : RingForm::steps, routes,
                            program);
  program.fixed_latency_s = flows.fixed_latency_s;
  program.compressed = flows.rounds;
  // One step of transfers per rank (a direct all_to_all, gather, scatter; a direct
  // reduce_scatter(_v), whose n-1 later steps only fold locally) is a round too: every flow starts
  // at once. The dependency playback waited on every active flow per event (all_to_all, 64 ranks,
  // 4032 flows at once: 49 s; as a round 9 s, the same time).
  const bool one_step = !program.transfers.empty() && one_transfer_step(program);
  if (flows.bulk || one_step) {  // flows that start at once: one round (no step bookkeeping)
    FlowRound round;
    for (std::size_t rank = 0; rank < program.rank_steps.size(); ++rank) {
      for (const std::vector<int>& step : program.rank_steps[rank]) {
        for (int t : step) {  // each transfer once: in its sender's step
          if (program.transfers[static_cast<std::size_t>(t)].src_rank == static_cast<int>(rank)) {
            round.transfers.push_back(t);
          }
        }
      }
    }
    program.rounds = {std::move(round)};
    program.round_sequence = {{0, 1.0}};
    program.compressed = true;
  }
  const AlgorithmParams& params = priced.params;
  FlowTimes times;
  std::size_t simulated = program.transfers.size();
  if (!program.transfers.empty()) {
    // One round: played by classes of equal flows without SimGrid (flow_fluid.cc) unless the
    // round is too asymmetric; aggregate_symmetric_flows false plays every flow in SimGrid.
    std::optional<FlowTimes> fluid;
    if ((flows.bulk || one_step) && r.aggregate_symmetric_flows) {
      fluid = play_rounds_fluid(program, kMaxFluidClasses, &simulated);
    }
    const bool folded = std::any_of(program.transfers.begin(), program.transfers.end(),
                                    [](const FlowTransfer& t) { return t.copies != 1.0; });
    if (fluid) {
      times = std::move(*fluid);
    } else if (!folded) {
      times = program.compressed && r.aggregate_symmetric_flows
                  ? play_symmetric(program, &simulated)
                  : play_in_child(program);
    } else {  // SimGrid: folded pieces as the transfers they stand for
      const Expanded sg = expand_copies(program);
      simulated = sg.program.transfers.size();
      const FlowTimes played = program.compressed && r.aggregate_symmetric_flows
                                   ? play_symmetric(sg.program, &simulated)
                                   : play_in_child(sg.program);
      times.start_s.assign(program.transfers.size(), 0.0);
      times.end_s.assign(program.transfers.size(), 0.0);
      for (std::size_t i = 0; i < sg.origin.size(); ++i) {
        const auto t = static_cast<std::size_t>(sg.origin[i]);
        times.start_s[t] = played.start_s[i];
        times.end_s[t] = std::max(times.end_s[t], played.end_s[i]);
      }
    }
  }

  // Makespan, and how many times each transfer happens (compressed rounds repeat).
  std::vector<double> repeats(program.transfers.size(), 1.0);
  double makespan_s = 0.0;
  std::vector<double> round_duration(program.rounds.size(), 0.0);
  if (program.compressed) {
    std::fill(repeats.begin(), repeats.end(), 0.0);
    for (std::size_t i = 0; i < program.rounds.size(); ++i) {
      for (int t : program.rounds[i].transfers) {
        round_duration[i] = std::max(round_duration[i], times.end_s[static_cast<std::size_t>(t)]);
      }
    }
    for (const auto& [round, count] : program.round_sequence) {
      for (int t : program.rounds[static_cast<std::size_t>(round)].transfers) {
        repeats[static_cast<std::size_t>(t)] += count;
      }
    }
    if (!program.transfers.empty()) makespan_s = ring_path_s(program, times);
  } else {
    for (double e : times.end_s) makespan_s = std::max(makespan_s, e);
  }
  const double time_s = program.fixed_latency_s + makespan_s;

  FlowReport report;
  report.prediction.time_us = time_s * 1e6;
  report.prediction.channels = params.channels;
  report.prediction.model = "flow";
  report.simulated_flows = simulated;
  report.step_playback = !program.compressed;
  report.links = link_loads(topology, program, repeats, time_s);
  if (options.record_transfers) {
    const auto record = [&](int t, double origin_s, int step) {
      if (report.transfers.size() >= options.max_transfers) {
        report.transfers_truncated = true;
        return false;
      }
      const FlowTransfer& tr = program.transfers[static_cast<std::size_t>(t)];
      const FlowRoute& route = program.routes[static_cast<std::size_t>(tr.route)];
      report.transfers.push_back(
          {.src = route.src < program.nranks ? route.src : -1,  // -1: an NVSwitch
           .dst = route.dst < program.nranks ? route.dst : -1,
           .step = step,
           .bytes = tr.bytes * tr.copies,  // folded channel pieces: the pair's bytes
           .start_us =
               (program.fixed_latency_s + origin_s + times.start_s[static_cast<std::size_t>(t)]) *
               1e6,
           .end_us =
               (program.fixed_latency_s + origin_s + times.end_s[static_cast<std::size_t>(t)]) *
               1e6});
      return true;
    };
    if (program.compressed) {
      double origin = 0.0;
      int step = 0;
      for (const auto& [round, count] : program.round_sequence) {
        for (double k = 0; k < count; k += 1.0, ++step) {
          for (int t : program.rounds[static_cast<std::size_t>(round)].transfers) {
            if (!record(t, origin, step)) return report;
          }
          origin += round_duration[static_cast<std::size_t>(round)];
        }
      }
    } else {
      for (std::size_t t = 0; t < program.transfers.size(); ++t) {
        if (!record(static_cast<int>(t), 0.0, program.transfers[t].step)) break;
      }
      std::stable_sort(
          report.transfers.begin(), report.transfers.end(),
          [](const TransferRecord& a, const TransferRecord& b) { return a.start_us < b.start_us; });
    }
  }
  return report;
}

}  // namespace twinccl::sim::detail
