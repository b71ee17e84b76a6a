// Alpha-beta timing for the algorithms NCCL has no model for (direct, halving_doubling, bruck,
// hierarchical, ...), derived from the schedules of the ranks whose roles differ.
//
// How it works. For each step of a priced rank: alpha = the longest route latency among its
// transfers (sends to and receives from its peers); beta = the busiest link direction on those
// routes: bytes the rank moves across it in the step / its bandwidth (so n-1 sends out of one GPU
// link share it, and one transfer alone is limited by its route's slowest link). A rank's time =
// sum over its steps of (alpha + beta), plus, with software latency on, NCCL's ring base latency
// once and its per-hop latency (by link class) in every step's alpha, as flow charges them
// (what_if_latency.h, their one owner); alpha's route latency is then only what NCCL's hop
// does not hold (route_latency.h). Other ranks' traffic (contention) is the flow model's business.
// Channels: where flow plays a ring-stepped call's channels (every step one peer each way: the
// hierarchical all_reduce) on link-disjoint ring orders (transfer_pricing.h rotated_channels,
// channel_ranks: an xGMI mesh, a torus, the fully linked nodes of a cluster), so does the price:
// channel c's piece of a step goes between the GPUs its order puts the ranks on, over a link no
// other piece of the step uses, so the pieces run in parallel. mi300x-8 hierarchical all_reduce
// 64 MiB was 2502.7 us on one ring order (every byte over one 48 GB/s xGMI link per step), flow
// 405.5 over the 7 orders; the bound, 2 x 7/8 x 64 MiB over the GPU's 7 links, is 349.5 us.
// Only pieces whose rotated route is one GPU-GPU link: a piece through an NVSwitch port or a NIC
// shares it with the other ranks' pieces of the step that rotation puts there, which a rank
// priced alone does not see (rotated over the rails, h100-cluster-4 direct all_gather priced
// 153.5 us against flow's 1071.0), so it is priced on the ranks' own GPUs, whose routes carry
// the same bytes per NIC or port.
// Even calls: the call takes its busiest rank's time, over every rank up to kAllRanksPriced = 64
// (bruck, halving_doubling: up to kAllRanksLogSteps = 1024, O(n log n)), else rank 0, rank n-1
// and halving_doubling's roles off a power of two p (e = n - p: ranks 2i < 2e hand their data to
// 2i+1 and sit out, 2i+1 run the core with it, 2e.. run it alone; the ranks either side of each
// boundary). Rank 0 alone was not representative there: it sits out, so h100-cluster-3 (24
// ranks) all_reduce was 377.2 us, under the 1760 us rank 1 needs for the 64 MiB it must receive,
// exchange with node 2 (half of it, twice) and hand back in turn. The role sample is a lower
// bound of the all-ranks price, not exact: a role's ranks sit at different places in their
// nodes, so their partners' routes differ (216 ranks of gb200-nvl72-cluster-3 all_reduce: 2107.1
// us sampled, 2965.2 over every rank). Each rank's own sum, not the step-by-step maximum: the
// schedules number a rank's steps from its first one, so a core rank's step 0 is a partner's
// step 1. Cost: O(priced ranks x their ops).
// Uneven collectives (the _v variants) are not symmetric: rank 0 need not be the busiest (a
// direct all_gather_v's heaviest rank sends its block n-1 times), so each step costs the most any
// priced rank spends on it (every rank up to kAllRanksPriced = 64, else rank 0, the root and the
// ranks with the largest and smallest shares, sent and received). 4 ranks weighted 1,2,3,4,
// direct all_gather_v: rank 3's link carries 3 x 4 units, not rank 0's 3 x 1 out, 9 in.
// That prices the steps in lockstep; where every rank's step sends to one peer and receives from
// one (ring, bruck), an uneven call is priced along its ranks' steps instead (alpha_beta_path.cc).
#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "alpha_beta.h"
#include "model.h"
#include "route_latency.h"
#include "transfer_pricing.h"

namespace twinccl::sim::detail {
namespace {

// Ranks whose steps an uneven call is priced by: all of them up to kAllRanksPriced, else rank 0,
// the root and the ranks sending or receiving the most and the least.
constexpr int kAllRanksPriced = 64;
// Uneven calls priced along their ranks' steps (below) up to this many ranks: every rank's
// schedule is built, O(n^2) operations for a ring (256 ranks: 0.08 s, 1024: 0.6 s on a loaded
// 2-core machine); above it, the per-step sum.
constexpr int kPathRanks = 256;
// Even calls of the log-step algorithms (bruck, halving_doubling: O(log n) ops a rank) are priced
// at every rank up to this many: O(n log n) ops and routes (1024 ranks: ~0.02 s, 4096: 0.07 s).
constexpr int kAllRanksLogSteps = 1024;

std::vector<int> priced_ranks(const CollectiveSpec& spec, std::string_view algorithm) {
  const int n = spec.nranks;
  if (n <= 1) return {0};
  std::vector<int> ranks;
  const bool log_steps = !is_uneven(spec.kind) && grouped_steps(algorithm, false);
  if (n <= kAllRanksPriced || (log_steps && n <= kAllRanksLogSteps)) {
    for (int i = 0; i < n; ++i) ranks.push_back(i);
    return ranks;
  }
  ranks = {0, std::clamp(spec.root, 0, n - 1), n - 1};
  if (!is_uneven(spec.kind)) {
    // The roles halving_doubling gives a world that is not a power of two p (halving_doubling.cc):
    // ranks 2i < 2e sit out, 2i+1 fold their data and run the core, r >= 2e run the core alone.
    int p = 1;
    while (p <= n / 2) p *= 2;
    const int e = n - p;
    for (const int r : {1, 2 * e - 2, 2 * e - 1, 2 * e, 2 * e + 1}) {
      if (e > 0 && r >= 0 && r < n) ranks.push_back(r);
    }
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return ranks;
  }
  const auto extremes = [&](const std::vector<std::size_t>& v) {
    if (v.empty()) return;
    ranks.push_back(static_cast<int>(std::max_element(v.begin(), v.end()) - v.begin()));
    ranks.push_back(static_cast<int>(std::min_element(v.begin(), v.end()) - v.begin()));
  };
  extremes(spec.counts);
  if (spec.matrix.size() == static_cast<std::size_t>(n) * static_cast<std::size_t>(n)) {
    std::vector<std::size_t> sent(static_cast<std::size_t>(n)), received(sent.size());
    for (std::size_t s = 0; s < sent.size(); ++s) {
      for (std::size_t d = 0; d < sent.size(); ++d) {
        sent[s] += spec.matrix[s * sent.size() + d];
        received[d] += spec.matrix[s * sent.size() + d];
      }
    }
    extremes(sent);
    extremes(received);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

// Whether every step of rank 0 sends to one peer and receives from one (a ring's steps: the
// hierarchical all_reduce), so each channel's piece of a step has a link of its own on a mesh's
// link-disjoint ring orders.
bool ring_steps(const Resolved& r, AlgorithmParams params) {
  params.channels = 1;
  const RankSchedule rs = build_rank_schedule(r.spec, r.algorithm, params, 0);
  for (const Step& step : rs.steps) {
    int to = -1, from = -1;
    for (const StepOp& op : step.ops) {
      const bool send = op.kind == StepOpKind::send;
      if (!send && op.kind != StepOpKind::recv && op.kind != StepOpKind::recv_reduce) continue;
      int& peer = send ? to : from;
      if (peer >= 0 && peer != op.peer) return false;
      peer = op.peer;
    }
  }
  return true;
}

}  // namespace

Prediction analytic_alpha_beta(const topo::Topology& topology, const TopologyView& view,
                               const Resolved& r, const WhatIfLatency& hops) {
  AlgorithmParams params = r.params;
  // Channels on other GPUs per channel, as flow plays them (transfer_pricing.h): a step's sends
  // over distinct links then run in parallel, its sends over one link in series.
  ChannelRanks gpus;
  if (r.spec.nranks > 1 && rotated_channels(r, false) && ring_steps(r, params)) {
    std::vector<int> all(static_cast<std::size_t>(r.spec.nranks));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    gpus = channel_ranks(topology, all);
    if (!gpus.direct_links) gpus = {};
    if (params.channels <= 0) params.channels = static_cast<int>(gpus.distinct());
  }
  params.channels = std::max(1, params.channels);
  // Wire bytes per element: the protocol's as flow charges them (RCCL's LL128 line on AMD).
  const double element_bytes =
      static_cast<double>(size_of(r.dtype)) * protocol_wire_bytes_per_byte(view, r.protocol);
  // Software latency: NCCL's ring costs as flow charges them (`hops`, the caller's
  // what_if_latency), base once and one hop per step; the routes then add only the link latencies
  // beyond NCCL's hop (route_latency.h), as flow's do. Off: no base, no hop.
  const RouteLatency route_latency = route_latency_rule(r.software_latency && r.spec.nranks > 1);
  std::vector<double> step_us;   // by step index: the most any priced rank spends on it
  double busiest_rank_us = 0.0;  // even calls: the most any priced rank spends on its own steps
  std::unordered_map<std::int64_t, std::pair<double, double>> load;  // dir -> (bytes, bytes/s)
  std::unordered_map<std::int64_t, RouteCost> routes;                // by topology GPU pair
  for (const int rank : priced_ranks(r.spec, r.algorithm)) {
    const RankSchedule rs = build_rank_schedule(r.spec, r.algorithm, params, rank);
    const auto cached = [&](int a, int b) -> const RouteCost& {  // topology GPUs a -> b
      auto it = routes.find(static_cast<std::int64_t>(a) * r.spec.nranks + b);
      if (it == routes.end()) {
        it = routes
                 .emplace(static_cast<std::int64_t>(a) * r.spec.nranks + b,
                          route_cost(topology, a, b, route_latency))
                 .first;
      }
      return it->second;
    };
    if (step_us.size() < rs.steps.size()) step_us.resize(rs.steps.size(), 0.0);
    double rank_us = 0.0;
    for (std::size_t si = 0; si < rs.steps.size(); ++si) {
      load.clear();
      double alpha_us = 0.0;
      bool moves = false;
      for (const StepOp& op : rs.steps[si].ops) {
        const bool send = op.kind == StepOpKind::send;
        const bool recv = op.kind == StepOpKind::recv || op.kind == StepOpKind::recv_reduce;
        if (!send && !recv) continue;
        moves = true;
        const int me = gpus.topology_rank(rank, op.channel);
        const int peer = gpus.topology_rank(op.peer, op.channel);
        const RouteCost& rotated = send ? cached(me, peer) : cached(peer, me);
        const bool own_link =
            rotated.directions.size() == 1 && rotated.link_class != LinkClass::network;
        const RouteCost& c = own_link || gpus.perms.empty()
                                 ? rotated
                                 : (send ? cached(rank, op.peer) : cached(op.peer, rank));
        const double bytes =
            static_cast<double>(send ? op.src.count : op.dst.count) * element_bytes;
        alpha_us = std::max(alpha_us, c.latency_us + hops.hop(c.link_class));
        for (const auto& [dir, bandwidth] : c.directions) {
          auto& entry = load[dir];
          entry.first += bytes;
          entry.second = bandwidth;
        }
      }
      if (!moves) continue;
      double beta_us = 0.0;
      for (const auto& [dir, entry] : load)
        beta_us = std::max(beta_us, entry.first / entry.second * 1e6);
      step_us[si] = std::max(step_us[si], alpha_us + beta_us);
      rank_us += alpha_us + beta_us;
    }
    busiest_rank_us = std::max(busiest_rank_us, rank_us);
  }
  double total_us = hops.base_us;
  const std::optional<double> path_us =
      is_uneven(r.spec.kind) && r.spec.nranks > 1 && r.spec.nranks <= kPathRanks
          ? uneven_path_us(topology, r, params, element_bytes, hops, route_latency)
          : std::nullopt;
  if (path_us) {
    total_us += *path_us;
  } else if (!is_uneven(r.spec.kind)) {
    total_us += busiest_rank_us;
  } else {
    for (double us : step_us) total_us += us;
  }
  Prediction p;
  p.channels = params.channels;
  p.model = "alpha-beta";
  p.time_us = total_us;
  return p;
}

}  // namespace twinccl::sim::detail
