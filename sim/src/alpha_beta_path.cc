// The alpha-beta model's route costs, and its price of an uneven call along its ranks' steps.
//
// How it works. Summing each step's busiest rank prices the steps in lockstep, but an uneven
// call's ranks are not: where every rank's step sends to one peer and receives from one (ring,
// bruck), the call is priced along its ranks' steps by flow's own rules (uneven_path_us): a
// message leaves when its sender reached its step (grouped steps: and its receiver too) and its
// connection's previous one ended, takes hop delay + route latency + bytes / its route's slowest
// link, and a rank leaves a step when its receive ended (grouped: its send too); up to kPathRanks
// ranks (analytic_alpha_beta.cc; every rank's schedule is built). Lockstep had the uneven ring on
// h100-cluster-8 at 2405.8 us (64 MiB, 1 + r mod 4; flow 1411.8): every step paid the heaviest
// block on the slowest hop, though each edge carries a different block per step. Route latencies
// are flow's (PXN's relay across rails).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "alpha_beta.h"

namespace twinccl::sim::detail {

RouteCost route_cost(const topo::Topology& t, int a, int b, RouteLatency latency) {
  RouteCost cost;
  const std::vector<topo::LinkId> links = t.route(a, b);
  const std::vector<topo::VertexId> vertices = t.route_vertices(a, b);
  cost.latency_us = pair_route_latency_us(t, a, b, links, latency);  // PXN's relay, as flow's
  cost.link_class = route_link_class(t, links);
  // A network link moves the share of its rate a call across nodes gets (model.h).
  const double network_share = nic_delivered_share(t);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const topo::Link& l = t.link(links[i]);
    if (l.sharing == topo::Sharing::fatpipe) continue;
    const bool forward = l.duplex == topo::Duplex::half || l.a == vertices[i];
    cost.directions.emplace_back(
        static_cast<std::int64_t>(links[i]) * 2 + (forward ? 0 : 1),
        l.bandwidth_gbps * 1e9 * (l.type == topo::LinkType::network ? network_share : 1.0));
  }
  return cost;
}

namespace {

// One message: a rank's sends of one step to its one peer (slices to that peer summed).
struct Message {
  int src = 0, dst = 0, send_step = 0, recv_step = -1;
  double bytes = 0.0;
  double start_us = -1.0, end_us = -1.0;  // -1: not yet
};

}  // namespace

// The uneven call along its ranks' steps (see the top): nullopt when some rank's step talks to
// more than one peer each way (direct: its sends share the port, which the per-step sum prices),
// or the ranks' sends and receives do not pair up.
std::optional<double> uneven_path_us(const topo::Topology& topology, const Resolved& r,
                                     const AlgorithmParams& params, double element_bytes,
                                     const WhatIfLatency& hops, RouteLatency route_latency) {
  const int n = r.spec.nranks;
  const bool grouped = grouped_steps(r.algorithm, false);
  std::vector<Message> messages;
  std::vector<std::vector<int>> send_of(static_cast<std::size_t>(n));  // [rank][step] message
  std::vector<std::vector<int>> recv_of(static_cast<std::size_t>(n));
  std::map<std::pair<int, int>, std::vector<int>> by_pair;  // (src, dst) -> messages in order
  std::map<std::pair<int, int>, int> received;              // (src, dst) -> paired so far
  for (int rank = 0; rank < n; ++rank) {
    const RankSchedule rs = build_rank_schedule(r.spec, r.algorithm, params, rank);
    auto& sends = send_of[static_cast<std::size_t>(rank)];
    auto& recvs = recv_of[static_cast<std::size_t>(rank)];
    sends.assign(rs.steps.size(), -1);
    recvs.assign(rs.steps.size(), -1);
    for (std::size_t s = 0; s < rs.steps.size(); ++s) {
      int to = -1, from = -1;
      double bytes = 0.0;
      for (const StepOp& op : rs.steps[s].ops) {
        const bool send = op.kind == StepOpKind::send;
        const bool recv = op.kind == StepOpKind::recv || op.kind == StepOpKind::recv_reduce;
        int& peer = send ? to : from;
        if (!send && !recv) continue;
        if (peer >= 0 && peer != op.peer) return std::nullopt;  // two peers one way
        peer = op.peer;
        if (send) bytes += static_cast<double>(op.src.count) * element_bytes;
      }
      if (to >= 0) {
        sends[s] = static_cast<int>(messages.size());
        by_pair[{rank, to}].push_back(sends[s]);
        messages.push_back(
            {.src = rank, .dst = to, .send_step = static_cast<int>(s), .bytes = bytes});
      }
      if (from >= 0) recvs[s] = -2 - from;  // paired below, once every send is known
    }
  }
  for (int rank = 0; rank < n; ++rank) {
    auto& recvs = recv_of[static_cast<std::size_t>(rank)];
    for (std::size_t s = 0; s < recvs.size(); ++s) {
      if (recvs[s] == -1) continue;
      const int from = -2 - recvs[s];
      const auto it = by_pair.find({from, rank});
      int& k = received[{from, rank}];
      if (it == by_pair.end() || k >= static_cast<int>(it->second.size())) return std::nullopt;
      recvs[s] = it->second[static_cast<std::size_t>(k++)];
      messages[static_cast<std::size_t>(recvs[s])].recv_step = static_cast<int>(s);
    }
  }
  std::unordered_map<std::int64_t, RouteCost> routes;
  const auto cost_of = [&](const Message& m) -> const RouteCost& {
    const std::int64_t key = static_cast<std::int64_t>(m.src) * n + m.dst;
    auto it = routes.find(key);
    if (it == routes.end())
      it = routes.emplace(key, route_cost(topology, m.src, m.dst, route_latency)).first;
    return it->second;
  };
  // Flow's playback without contention: ranks advance step by step as their messages allow.
  std::vector<std::size_t> step(static_cast<std::size_t>(n), 0);
  std::vector<double> reach_us(static_cast<std::size_t>(n), 0.0);  // entered its current step
  std::map<std::pair<int, int>, double> connection_free_us;        // (src, dst) -> last end
  double makespan_us = 0.0;
  for (bool moved = true; moved;) {
    moved = false;
    for (int rank = 0; rank < n; ++rank) {
      const auto ri = static_cast<std::size_t>(rank);
      while (step[ri] < send_of[ri].size()) {
        const std::size_t s = step[ri];
        const int out = send_of[ri][s], in = recv_of[ri][s];
        if (out >= 0 && messages[static_cast<std::size_t>(out)].start_us < 0.0) {
          Message& m = messages[static_cast<std::size_t>(out)];
          const auto di = static_cast<std::size_t>(m.dst);
          const bool peer_there =
              m.recv_step >= 0 && step[di] == static_cast<std::size_t>(m.recv_step);
          if (grouped && !peer_there) break;  // its receiver has not reached the step yet
          const RouteCost& c = cost_of(m);
          const double delay_us = hops.hop(c.link_class);  // 0 without software latency
          double bandwidth = 0.0;
          for (const auto& dir : c.directions) {
            bandwidth = bandwidth == 0.0 ? dir.second : std::min(bandwidth, dir.second);
          }
          double& free_us = connection_free_us[{m.src, m.dst}];
          const double ready_us = std::max(reach_us[ri], grouped ? reach_us[di] : 0.0) + delay_us;
          m.start_us = std::max(ready_us, free_us);
          m.end_us =
              m.start_us + c.latency_us + (bandwidth > 0.0 ? m.bytes / bandwidth * 1e6 : 0.0);
          free_us = m.end_us;
          makespan_us = std::max(makespan_us, m.end_us);
          moved = true;
        }
        double leave_us = reach_us[ri];
        if (in >= 0) {
          const Message& m = messages[static_cast<std::size_t>(in)];
          if (m.end_us < 0.0) break;  // its receive has not started yet
          leave_us = std::max(leave_us, m.end_us);
        }
        if (grouped && out >= 0)
          leave_us = std::max(leave_us, messages[static_cast<std::size_t>(out)].end_us);
        reach_us[ri] = leave_us;
        ++step[ri];
        moved = true;
      }
    }
  }
  for (int rank = 0; rank < n; ++rank) {
    const auto ri = static_cast<std::size_t>(rank);
    if (step[ri] < send_of[ri].size()) return std::nullopt;  // the steps do not pair up
  }
  return makespan_us;
}

}  // namespace twinccl::sim::detail
