// Alpha-beta timing for the algorithms NCCL has no model for (direct, halving_doubling, bruck,
// hierarchical, ...), derived from the schedule of rank 0 (these algorithms are symmetric, and in
// rooted collectives rank 0 is the root, the busiest rank).
//
// How it works. For each step of rank 0: alpha = the longest route latency among its transfers
// (sends to and receives from its peers); beta = the busiest link direction on those routes:
// bytes rank 0 moves across it in the step / its bandwidth (so n-1 sends out of one GPU link share
// it, and one transfer alone is limited by its route's slowest link). time = sum over steps of
// (alpha + beta), plus, with software latency on, NCCL's ring Simple base latency once and its
// per-hop latency (by link class) in every step's alpha [assumed]; alpha's route latency is then
// only what NCCL's hop does not hold (route_latency.h). Only rank 0's schedule is built:
// O(its steps and ops), no per-rank loop, so it answers for any world size the algorithm's rank-0
// schedule fits in memory. Other ranks' traffic (contention) is the flow model's business.
// Uneven collectives (the _v variants) are not symmetric: rank 0 need not be the busiest (a
// direct all_gather_v's heaviest rank sends its block n-1 times), so each step costs the most any
// priced rank spends on it (every rank up to kAllRanksPriced = 64, else rank 0, the root and the
// ranks with the largest and smallest shares, sent and received). 4 ranks weighted 1,2,3,4,
// direct all_gather_v: rank 3's link carries 3 x 4 units, not rank 0's 3 x 1 out, 9 in.
#include <algorithm>
#include <unordered_map>
#include <vector>

#include "model.h"
#include "route_latency.h"

namespace twinccl::sim::detail {
namespace {

struct RouteCost {
  std::vector<std::pair<std::int64_t, double>> directions;  // (link*2 + dir, bytes/s)
  double latency_us = 0.0;
  LinkClass link_class = LinkClass::nvlink;  // network if any network link, else PCIe if any
};

RouteCost route_cost(const topo::Topology& t, int a, int b, RouteLatency latency) {
  RouteCost cost;
  const std::vector<topo::LinkId> links = t.route(a, b);
  const std::vector<topo::VertexId> vertices = t.route_vertices(a, b);
  cost.latency_us = route_latency_us(t, links, latency);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const topo::Link& l = t.link(links[i]);
    if (l.type == topo::LinkType::network) cost.link_class = LinkClass::network;
    if (l.type == topo::LinkType::pcie && cost.link_class == LinkClass::nvlink) {
      cost.link_class = LinkClass::pcie;
    }
    if (l.sharing == topo::Sharing::fatpipe) continue;
    const bool forward = l.duplex == topo::Duplex::half || l.a == vertices[i];
    cost.directions.emplace_back(static_cast<std::int64_t>(links[i]) * 2 + (forward ? 0 : 1),
                                 l.bandwidth_gbps * 1e9);
  }
  return cost;
}

// Ranks whose steps an uneven call is priced by: all of them up to kAllRanksPriced, else rank 0,
// the root and the ranks sending or receiving the most and the least.
constexpr int kAllRanksPriced = 64;

std::vector<int> priced_ranks(const CollectiveSpec& spec) {
  const int n = spec.nranks;
  if (!is_uneven(spec.kind) || n <= 1) return {0};
  std::vector<int> ranks;
  if (n <= kAllRanksPriced) {
    for (int i = 0; i < n; ++i) ranks.push_back(i);
    return ranks;
  }
  ranks = {0, std::clamp(spec.root, 0, n - 1)};
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

}  // namespace

Prediction analytic_alpha_beta(const topo::Topology& topology, const Resolved& r) {
  AlgorithmParams params = r.params;
  params.channels = std::max(1, params.channels);
  const double element_bytes =
      static_cast<double>(size_of(r.dtype)) * kNccl.wire_bytes_per_byte[index_of(r.protocol)];
  // Software latency [assumed]: NCCL's ring Simple costs, base once and one hop per step; the
  // routes then add only the link latencies beyond NCCL's hop (route_latency.h), as flow's do.
  const bool software = r.software_latency && r.spec.nranks > 1;
  const RouteLatency route_latency = software ? RouteLatency::beyond_nccl_hop : RouteLatency::all;
  const std::size_t pi = index_of(r.protocol);
  std::vector<double> step_us;  // by step index: the most any priced rank spends on it
  std::unordered_map<std::int64_t, std::pair<double, double>> load;  // dir -> (bytes, bytes/s)
  for (const int rank : priced_ranks(r.spec)) {
    const RankSchedule rs = build_rank_schedule(r.spec, r.algorithm, params, rank);
    std::unordered_map<int, RouteCost> out_routes, in_routes;  // by peer
    const auto cached = [&](std::unordered_map<int, RouteCost>& cache, int a, int b,
                            int peer) -> const RouteCost& {
      auto it = cache.find(peer);
      if (it == cache.end())
        it = cache.emplace(peer, route_cost(topology, a, b, route_latency)).first;
      return it->second;
    };
    if (step_us.size() < rs.steps.size()) step_us.resize(rs.steps.size(), 0.0);
    for (std::size_t si = 0; si < rs.steps.size(); ++si) {
      load.clear();
      double alpha_us = 0.0;
      bool moves = false;
      for (const StepOp& op : rs.steps[si].ops) {
        const bool send = op.kind == StepOpKind::send;
        const bool recv = op.kind == StepOpKind::recv || op.kind == StepOpKind::recv_reduce;
        if (!send && !recv) continue;
        moves = true;
        const RouteCost& c = send ? cached(out_routes, rank, op.peer, op.peer)
                                  : cached(in_routes, op.peer, rank, op.peer);
        const double bytes =
            static_cast<double>(send ? op.src.count : op.dst.count) * element_bytes;
        double hop_us = c.latency_us;
        if (software) {
          hop_us +=
              at(kNccl.hop_latency_us[static_cast<std::size_t>(c.link_class)], NcclAlgo::ring, pi);
        }
        alpha_us = std::max(alpha_us, hop_us);
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
    }
  }
  double total_us = software ? at(kNccl.base_latency_us, NcclAlgo::ring, pi) : 0.0;
  for (double us : step_us) total_us += us;
  Prediction p;
  p.channels = params.channels;
  p.model = "alpha-beta";
  p.time_us = total_us;
  return p;
}

}  // namespace twinccl::sim::detail
