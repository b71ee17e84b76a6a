// Flow programs from a Schedule (every transfer, dependency playback) or, for a large symmetric
// ring, from the ring's shape alone (compressed rounds).
//
// How it works. From a schedule: the k-th send from A to B (step order, then op order) pairs with
// the k-th recv/recv_reduce on B from A (schedule.h), one transfer each, listed in the sender's and
// the receiver's step. Compressed ring, n ranks, L logical steps (2(n-1) all_reduce, n-1
// reduce_scatter/all_gather), each moving one chunk (the largest: ceil(count/n) for all_reduce,
// count for the others) from every rank r to r+1, split into P pieces (chunk_elements) that the
// lowering overlaps as a wavefront: lowered step t carries k(t) = min(t+1, P, L, L+P-1-t) pieces.
// Every lowered step is one round of n transfers r -> r+1 of k(t) pieces; rounds with the same k
// are simulated once. Channels split a transfer into equal flows; those on the same route (the
// same rotation of ChannelRanks) are one flow of their share (CM02 shares equal flows equally, so
// this is exact when every rotation carries as many channels). Exact when count divides evenly
// (chunks all equal); otherwise every chunk is taken as the largest (at most one element more).
// Bulk ring (the replay's large rings): per rotation and rank r one flow r -> r+1 of all L steps'
// bytes, the L per-hop delays and L-1 route latencies folded into the call's fixed latency; it
// keeps the links loaded for the whole call, so concurrent calls still contend.
#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "flow_build.h"
#include "twinccl/errors.h"

namespace twinccl::sim::detail {

namespace {

// `gpu(rank, channel)`: the topology rank playing a schedule rank on a channel.
template <class GpuOf>
void build_from_schedule(const Schedule& schedule, const TransferCost& cost, RouteTable& routes,
                         FlowProgram& program, const GpuOf& gpu) {
  const int n = schedule.spec.nranks;
  program.rank_steps.assign(static_cast<std::size_t>(n), {});
  std::unordered_map<std::uint64_t, std::vector<int>> sends;  // (src, dst) -> transfers in order
  const auto pair_key = [n](int a, int b) {
    return static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(n) +
           static_cast<std::uint64_t>(b);
  };
  for (int r = 0; r < n; ++r) {
    const RankSchedule& rs = schedule.ranks[static_cast<std::size_t>(r)];
    auto& steps = program.rank_steps[static_cast<std::size_t>(r)];
    steps.resize(rs.steps.size());
    for (std::size_t s = 0; s < rs.steps.size(); ++s) {
      for (const StepOp& op : rs.steps[s].ops) {
        if (op.kind != StepOpKind::send) continue;
        const int route = routes.route_id(gpu(r, op.channel), gpu(op.peer, op.channel));
        const int id = static_cast<int>(program.transfers.size());
        program.transfers.push_back({.route = route,
                                     .bytes = cost.bytes(op.src.count),
                                     .delay_s = cost.delay_s(routes.route_class(route)),
                                     .step = static_cast<int>(s),
                                     .src_rank = r,
                                     .dst_rank = op.peer});
        sends[pair_key(r, op.peer)].push_back(id);
        steps[s].push_back(id);
      }
    }
  }
  std::unordered_map<std::uint64_t, std::size_t> received;
  for (int r = 0; r < n; ++r) {
    const RankSchedule& rs = schedule.ranks[static_cast<std::size_t>(r)];
    for (std::size_t s = 0; s < rs.steps.size(); ++s) {
      for (const StepOp& op : rs.steps[s].ops) {
        if (op.kind != StepOpKind::recv && op.kind != StepOpKind::recv_reduce) continue;
        const std::uint64_t key = pair_key(op.peer, r);
        const auto it = sends.find(key);
        std::size_t& k = received[key];
        if (it == sends.end() || k >= it->second.size()) {
          throw InternalError("flow playback: rank " + std::to_string(r) + " step " +
                              std::to_string(s) + " receives from rank " + std::to_string(op.peer) +
                              " more often than it sends (" + schedule.algorithm + ")");
        }
        program.rank_steps[static_cast<std::size_t>(r)][s].push_back(it->second[k++]);
      }
    }
  }
}

}  // namespace

void program_from_schedule(const Schedule& schedule, const TransferCost& cost, RouteTable& routes,
                           FlowProgram& program, std::span<const int> world_ranks) {
  build_from_schedule(schedule, cost, routes, program, [&](int r, int) {
    return world_ranks.empty() ? r : world_ranks[static_cast<std::size_t>(r)];
  });
}

void program_from_schedule(const Schedule& schedule, const TransferCost& cost, RouteTable& routes,
                           FlowProgram& program, const ChannelRanks& ranks) {
  build_from_schedule(schedule, cost, routes, program,
                      [&](int r, int channel) { return ranks.topology_rank(r, channel); });
}

void program_for_ring(const CollectiveSpec& spec, const AlgorithmParams& params,
                      const TransferCost& cost, RouteTable& routes, FlowProgram& program,
                      const ChannelRanks& ranks) {
  const int n = spec.nranks;
  const bool all_reduce = spec.kind == OpKind::all_reduce;
  const std::size_t logical = static_cast<std::size_t>(all_reduce ? 2 * (n - 1) : n - 1);
  const std::size_t chunk =
      all_reduce ? (spec.count + static_cast<std::size_t>(n) - 1) / static_cast<std::size_t>(n)
                 : spec.count;
  const std::size_t channels = static_cast<std::size_t>(std::max(1, params.channels));
  const std::size_t part = (chunk + channels - 1) / channels;  // elements per channel
  const std::size_t pieces = params.chunk_elements == 0 || part == 0
                                 ? 1
                                 : (part + params.chunk_elements - 1) / params.chunk_elements;
  const double piece_elements = static_cast<double>(chunk) / static_cast<double>(pieces);
  program.compressed = true;
  // Share of the step's data on each rotation: channels c with c mod rotations == rot.
  std::vector<double> share(ranks.distinct(), 0.0);
  for (std::size_t c = 0; c < channels; ++c) {
    share[ranks.rotation_of(static_cast<int>(c))] += 1.0 / static_cast<double>(channels);
  }
  std::map<std::size_t, int> round_of_k;
  const std::size_t total_steps = logical + pieces - 1;
  for (std::size_t t = 0; t < total_steps; ++t) {
    const std::size_t k = std::min({t + 1, pieces, logical, logical + pieces - 1 - t});
    auto [it, fresh] = round_of_k.try_emplace(k, static_cast<int>(program.rounds.size()));
    if (fresh) {
      FlowRound round;
      for (std::size_t rot = 0; rot < share.size(); ++rot) {
        if (share[rot] == 0.0) continue;
        for (int r = 0; r < n; ++r) {
          const int c = static_cast<int>(rot);
          const int route =
              routes.route_id(ranks.topology_rank(r, c), ranks.topology_rank((r + 1) % n, c));
          round.transfers.push_back(static_cast<int>(program.transfers.size()));
          program.transfers.push_back(
              {.route = route,
               .bytes = cost.bytes_exact(piece_elements * static_cast<double>(k) * share[rot]),
               .delay_s = cost.delay_s(routes.route_class(route)),
               .step = static_cast<int>(t),
               .src_rank = r,
               .dst_rank = (r + 1) % n});
        }
      }
      program.rounds.push_back(std::move(round));
    }
    if (!program.round_sequence.empty() && program.round_sequence.back().first == it->second) {
      program.round_sequence.back().second += 1.0;
    } else {
      program.round_sequence.emplace_back(it->second, 1.0);
    }
  }
}

double program_for_bulk_ring(const CollectiveSpec& spec, const AlgorithmParams& params,
                             const TransferCost& cost, RouteTable& routes, FlowProgram& program,
                             const ChannelRanks& ranks) {
  const int n = spec.nranks;
  const auto un = static_cast<std::size_t>(n);
  const bool all_reduce = spec.kind == OpKind::all_reduce;
  const double steps = all_reduce ? 2.0 * (n - 1) : n - 1.0;
  const std::size_t chunk = all_reduce ? (spec.count + un - 1) / un : spec.count;
  const std::size_t channels = static_cast<std::size_t>(std::max(1, params.channels));
  std::vector<double> share(ranks.distinct(), 0.0);
  for (std::size_t c = 0; c < channels; ++c) {
    share[ranks.rotation_of(static_cast<int>(c))] += 1.0 / static_cast<double>(channels);
  }
  program.rank_steps.assign(un, {{}});
  double max_delay = 0.0, max_latency = 0.0;
  for (std::size_t rot = 0; rot < share.size(); ++rot) {
    if (share[rot] == 0.0) continue;
    const int ch = static_cast<int>(rot);
    for (int r = 0; r < n; ++r) {
      const int next = (r + 1) % n;
      const int route = routes.route_id(ranks.topology_rank(r, ch), ranks.topology_rank(next, ch));
      max_delay = std::max(max_delay, cost.delay_s(routes.route_class(route)));
      max_latency =
          std::max(max_latency, program.routes[static_cast<std::size_t>(route)].latency_s);
      const int id = static_cast<int>(program.transfers.size());
      program.transfers.push_back(
          {.route = route,
           .bytes = cost.bytes_exact(static_cast<double>(chunk) * steps * share[rot]),
           .delay_s = 0.0,
           .step = 0,
           .src_rank = r,
           .dst_rank = next});
      program.rank_steps[static_cast<std::size_t>(r)].front().push_back(id);
      program.rank_steps[static_cast<std::size_t>(next)].front().push_back(id);
    }
  }
  return steps * max_delay + (steps - 1.0) * max_latency;
}

}  // namespace twinccl::sim::detail
