// Grouped send/recv rounds (nccl-tests' sendrecv and hypercube), priced on the tuner's
// communicator (p2p.h).
//
// How it works. NCCL has no tuning model for send/recv; its p2p kernels move a buffer over the
// path between the two GPUs. A round is priced as a set of flows that start together: each
// send's bandwidth is its route's slowest link divided by the sends of the round crossing that
// link the same way (both ways for a half-duplex link; a fatpipe switch backplane is never
// shared), network links at the share of a NIC NCCL's channels get. Its delay and the round's
// base latency are priced by their one owner, p2p_send_price.h (NCCL's ring/Simple hop by route
// class, the net plugin's completions and first message's wait, the route's link latencies beyond
// that hop as a collective's), which the replay asks for a trace's send/recv pair too. A send to
// itself (one rank) is a copy through device memory, as a one-rank collective is timed. 4 ranks,
// hypercube: round 1 pairs 0-1 and 2-3 (one block each way), round 2 pairs 0-2 and 1-3 (two blocks
// each way); the call lasts round 1 + round 2. The flow fidelity plays the same rounds
// (program.rounds, one after the other) on SimGrid. The delay of a send over the network holds the
// net plugin's host time for its messages' completions (on EFA 1 us a completion, a send and a
// receive per message, as many messages as NCCL cuts the send into) and on p5's RDMA protocol its
// first message's wait for the receiver's control message (one batch: p2p_net_messages.h). Launches
// (host_launch.h): with one GPU per thread each round is its own ncclGroupStart/End, so nccl-tests'
// host side is charged per round; with -g N > 1 nccl-tests wraps the N GPUs' calls in an outer
// group (common.cu startColl), the rounds' groups nest into it and the whole call is one launch:
// the host side is charged once, on the sum of the rounds' kernel times.
#include <algorithm>
#include <map>
#include <optional>

#include "flow_fluid.h"
#include "host_launch.h"
#include "model.h"
#include "p2p_send_price.h"
#include "twinccl/errors.h"
#include "twinccl/sim/p2p.h"

namespace twinccl::sim {
namespace {

using detail::SendPricing;
using detail::WhatIfLatency;

// A send to itself is a copy inside the GPU, as a one-rank collective is timed: through device
// memory (model.h), at the GPU's own link rate when its memory bandwidth is unknown; no software
// latency.
double self_copy_s(const Tuner& tuner, double bytes) {
  const double copy = detail::device_copy_algbw_gbps(tuner.view());
  const double gbps = copy > 0.0 ? copy : tuner.view().intra_gbps;
  return gbps > 0 ? bytes / (gbps * 1e9) : 0.0;
}

double round_bytes(const P2pRound& round) {
  double most = 0;
  for (const P2pSend& s : round.sends) most = std::max(most, s.bytes);
  return most;
}

double analytic_round_s(const Tuner& tuner, const P2pRound& round, const SendPricing& pricing) {
  const topo::Topology& t = tuner.topology();
  struct Crossing {
    topo::LinkId link;
    bool forward;
  };
  std::vector<std::vector<Crossing>> routes;
  std::map<std::pair<topo::LinkId, bool>, int> sharing;
  for (const P2pSend& s : round.sends) {
    const int a = tuner.ranks()[static_cast<std::size_t>(s.src)];
    const int b = tuner.ranks()[static_cast<std::size_t>(s.dst)];
    const std::vector<topo::LinkId> links = t.route(a, b);
    const std::vector<topo::VertexId> vertices = t.route_vertices(a, b);
    std::vector<Crossing> route;
    for (std::size_t i = 0; i < links.size(); ++i) {
      const topo::Link& l = t.link(links[i]);
      const bool forward = l.duplex == topo::Duplex::half || l.a == vertices[i];
      route.push_back({links[i], forward});
      if (l.sharing == topo::Sharing::shared) ++sharing[{links[i], forward}];
    }
    routes.push_back(std::move(route));
  }
  const WhatIfLatency latency = pricing.round_latency(round_bytes(round));
  double slowest = 0;
  for (std::size_t i = 0; i < round.sends.size(); ++i) {
    if (routes[i].empty()) {
      slowest = std::max(slowest, self_copy_s(tuner, round.sends[i].bytes));
      continue;
    }
    double gbps = 1e300;
    std::vector<topo::LinkId> ids;
    for (const Crossing& c : routes[i]) {
      const topo::Link& l = t.link(c.link);
      const double rate =
          l.bandwidth_gbps * (l.type == topo::LinkType::network ? pricing.network_share() : 1.0);
      const int flows = l.sharing == topo::Sharing::shared ? sharing[{c.link, c.forward}] : 1;
      gbps = std::min(gbps, rate / flows);
      ids.push_back(c.link);
    }
    const detail::LinkClass cls = detail::route_link_class(t, ids);
    const P2pSend& send = round.sends[i];
    // NCCL's channels for the send's size (p2p_channels.h): in one node fewer than fill the route
    // below 256 MiB, across nodes the network peers' few.
    if (const auto cap = pricing.channels_gbps(send.bytes, cls)) gbps = std::min(gbps, *cap);
    const double route_us =
        pricing.route_latency_us(tuner.ranks()[static_cast<std::size_t>(send.src)],
                                 tuner.ranks()[static_cast<std::size_t>(send.dst)]);
    const double s =
        pricing.delay_s(latency, send.bytes, cls) + route_us * 1e-6 + send.bytes / (gbps * 1e9);
    slowest = std::max(slowest, s);
  }
  return slowest + latency.base_us * 1e-6;
}

// The call's time as nccl-tests measures it, from its rounds' kernel times (see the header).
double launched_us(const std::vector<double>& round_us, int gpus_per_thread,
                   const detail::HostLaunch& launch) {
  double total_us = 0;
  if (gpus_per_thread > 1) {  // one outer group: one launch for all rounds
    for (double r : round_us) total_us += r;
    return detail::host_bound_time_us(total_us, gpus_per_thread, launch);
  }
  for (double r : round_us) total_us += detail::host_bound_time_us(r, gpus_per_thread, launch);
  return total_us;
}

double flow_s(const Tuner& tuner, const P2pPattern& pattern, const SendPricing& pricing,
              int gpus_per_thread) {
  const topo::Topology& t = tuner.topology();
  detail::FlowProgram program;
  program.nranks = t.gpu_count();
  detail::RouteTable routes(t, program,
                            detail::LinkScale{.network = pricing.network_share(),
                                              .route_latency = pricing.route_latency()});
  std::vector<double> base_s;  // per round: NCCL's base latency
  std::vector<double> self_s;  // per round: the longest send to itself (not on the network)
  for (const P2pRound& round : pattern) {
    const WhatIfLatency latency = pricing.round_latency(round_bytes(round));
    base_s.push_back(latency.base_us * 1e-6);
    detail::FlowRound played;
    self_s.push_back(0.0);
    for (const P2pSend& s : round.sends) {
      const int a = tuner.ranks()[static_cast<std::size_t>(s.src)];
      const int b = tuner.ranks()[static_cast<std::size_t>(s.dst)];
      if (a == b) self_s.back() = std::max(self_s.back(), self_copy_s(tuner, s.bytes));
      if (a == b || s.bytes <= 0) continue;
      detail::FlowTransfer transfer;
      transfer.route = routes.route_id(a, b);
      transfer.bytes = pricing.played_bytes(s.bytes, a, b);  // a link load counts s.bytes
      transfer.played_per_wire_byte = transfer.bytes / s.bytes;
      transfer.delay_s = pricing.delay_s(latency, s.bytes, routes.route_class(transfer.route));
      played.transfers.push_back(static_cast<int>(program.transfers.size()));
      program.transfers.push_back(transfer);
    }
    program.round_sequence.emplace_back(static_cast<int>(program.rounds.size()), 1.0);
    program.rounds.push_back(std::move(played));
  }
  program.compressed = true;
  detail::FlowTimes times;
  if (!program.transfers.empty()) {  // by classes of equal flows; SimGrid when asymmetric
    std::optional<detail::FlowTimes> fluid = detail::play_rounds_fluid(program);
    times = fluid ? std::move(*fluid) : detail::play_in_child(program);
  }
  std::vector<double> round_us;
  for (std::size_t k = 0; k < program.rounds.size(); ++k) {
    double end = self_s[k];
    for (int i : program.rounds[k].transfers)
      end = std::max(end, times.end_s[static_cast<std::size_t>(i)]);
    round_us.push_back((base_s[k] + end) * 1e6);
  }
  return launched_us(round_us, gpus_per_thread, detail::host_launch_of(t)) * 1e-6;
}

}  // namespace

P2pPattern sendrecv_pattern(int nranks, double bytes) {
  if (nranks < 1)
    throw InvalidArgument("sendrecv: nranks must be >= 1, got " + std::to_string(nranks));
  P2pRound round;
  for (int r = 0; r < nranks; ++r) round.sends.push_back({r, (r + 1) % nranks, bytes});
  return {round};
}

P2pPattern hypercube_pattern(int nranks, double bytes_per_rank) {
  if (nranks < 1 || (nranks & (nranks - 1)) != 0) {
    throw InvalidArgument("hypercube: nranks " + std::to_string(nranks) +
                          " is not a power of 2 (nccl-tests' hypercube_perf skips it too)");
  }
  P2pPattern rounds;
  for (int mask = 1; mask < nranks; mask <<= 1) {
    P2pRound round;
    for (int r = 0; r < nranks; ++r) round.sends.push_back({r, r ^ mask, mask * bytes_per_rank});
    rounds.push_back(std::move(round));
  }
  return rounds;
}

P2pPrediction predict_p2p(const Tuner& tuner, const P2pPattern& pattern, Fidelity fidelity,
                          int gpus_per_thread) {
  for (const P2pRound& round : pattern) {
    for (const P2pSend& s : round.sends) {
      if (s.src < 0 || s.dst < 0 || s.src >= tuner.nranks() || s.dst >= tuner.nranks()) {
        throw InvalidArgument("p2p: a send from rank " + std::to_string(s.src) + " to " +
                              std::to_string(s.dst) + " outside the " +
                              std::to_string(tuner.nranks()) + " ranks of the communicator");
      }
    }
  }
  const SendPricing pricing(tuner);  // p2p_send_price.h: the hop, completions, NIC share
  P2pPrediction p;
  p.fidelity = fidelity;
  if (fidelity == Fidelity::flow) {
    p.model = "flow";
    p.time_us = flow_s(tuner, pattern, pricing, gpus_per_thread) * 1e6;
    return p;
  }
  p.model = "nccl-p2p";
  std::vector<double> round_us;
  for (const P2pRound& round : pattern)
    round_us.push_back(analytic_round_s(tuner, round, pricing) * 1e6);
  p.time_us = launched_us(round_us, gpus_per_thread, detail::host_launch_of(tuner.topology()));
  return p;
}

}  // namespace twinccl::sim
