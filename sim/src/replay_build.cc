// A Trace lowered to a ReplayProgram (replay_program.h).
//
// How it works. The ops of different ranks were matched into instances, and each rank's ops into
// stream batches, by check_and_match (trace_analysis.h), which refused a trace whose ranks
// disagree or miss a counterpart: its members, instances and batches are the program's. Each
// communicator has one Tuner (its
// ranks' GPUs on the topology, built once); each collective asks it which algorithm and protocol
// (a forced one, ReplayOptions' or the op's, is kept and checked) and is priced and lowered to
// flows by the one owner of pricing (transfer_pricing.h), exactly as flow prices one call: NVLS as
// switch flows, others as their Schedule on the communicator's GPUs, or, for a ring
// all_reduce/reduce_scatter/all_gather on more ranks than bulk_ring_above_ranks, one bulk flow per
// rank and rail. Each call rank's steps become its member's steps. Then per rank its events:
// compute (declared seconds x compute_scale plus flops / flops_per_second, times the rank's
// compute slowdown), issue and wait as recorded, then a wait for every op, so a rank's time
// covers all its operations (rank 0: issue ar, compute 5 us, wait ar -> those, then wait ar).
#include "replay_build.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "p2p_send_price.h"
#include "trace_analysis.h"
#include "transfer_pricing.h"
#include "tuner_internal.h"
#include "twinccl/errors.h"
#include "twinccl/op_traits.h"
#include "twinccl/sim/selection.h"

namespace twinccl::sim::detail {
namespace {

// The call's spec as the emulator builds it (schedule.h); NCCL has no barrier: replay times it as
// an all_reduce of one element.
CollectiveSpec replay_spec(const TraceOp& op, int nranks) {
  CollectiveSpec spec = spec_of(desc_of(op), nranks);
  if (op.kind == OpKind::barrier) {
    spec.kind = OpKind::all_reduce;
    spec.count = 1;
  }
  return spec;
}

class Builder {
 public:
  Builder(const Trace& t, const MatchedTrace& matched, const topo::Topology& topology,
          const ReplayOptions& o, ReplayProgram& p)
      : trace_(t),
        matched_(matched),
        options_(o),
        topology_(topology),
        p_(p),
        platform_(platform_links(topology, options_.software_latency)),
        routes_(topology, init_flow(p, t.world_size()), platform_),
        // The caller's topology, not owned (it outlives the build).
        policy_(std::shared_ptr<const topo::Topology>(std::shared_ptr<const topo::Topology>(),
                                                      &topology),
                PolicyOptions{.software_latency = o.software_latency}) {}

  void build(std::vector<InstanceInfo>& info) {
    for (std::size_t m = 0; m < matched_.rank_of.size(); ++m) {
      p_.members.push_back({.rank = matched_.rank_of[m],
                            .instance = matched_.instance_of[m],
                            .batch = matched_.batch_of[m],
                            .steps = {}});
    }
    for (std::size_t i = 0; i < matched_.slots.size(); ++i) {
      info.push_back(lower(i));
      const TraceOp& op = *info.back().first;
      const std::size_t n = trace_.communicators[static_cast<std::size_t>(op.comm)].ranks.size();
      check_replay_call(trace_, op, is_p2p(op.kind) ? 2 : static_cast<int>(n),
                        info.back().algorithm, -1, p_.flow.transfers.size());
    }
  }

 private:
  static FlowProgram& init_flow(ReplayProgram& p, int n) {
    p.flow.nranks = n;
    return p.flow;
  }

  InstanceInfo lower(std::size_t i) {
    const std::vector<int>& slots = matched_.slots[i];  // by comm rank (send, recv)
    const TraceOp& op = matched_.op_of(trace_, *std::min_element(slots.begin(), slots.end()));
    const TraceCommunicator& comm = trace_.communicators[static_cast<std::size_t>(op.comm)];
    const int n = static_cast<int>(comm.ranks.size());
    InstanceInfo info{.first = &op, .algorithm = {}, .bulk = false};
    ReplayInstance inst;
    inst.members = slots;
    if (is_p2p(op.kind)) {
      const int sender = inst.members[0], receiver = inst.members[1];
      info.algorithm = "p2p";
      if (p_.members[static_cast<std::size_t>(sender)].rank ==
          p_.members[static_cast<std::size_t>(receiver)].rank) {
        p_.instances.push_back(std::move(inst));  // to itself: a local copy, no network, no time
        return info;
      }
      const int route = routes_.route_id(p_.members[static_cast<std::size_t>(sender)].rank,
                                         p_.members[static_cast<std::size_t>(receiver)].rank);
      // Priced as predict_p2p prices a one-send round on the communicator (p2p_send_price.h); a
      // network link here moves NCCL's speed for a NIC (platform_links), the send the
      // communicator's delivered share of it.
      const SendPricing& pricing = send_pricing(op.comm);
      const double bytes = static_cast<double>(op.count) * static_cast<double>(size_of(op.dtype));
      const LinkClass route_class = routes_.route_class(route);
      const WhatIfLatency latency = pricing.round_latency(bytes);
      // In one node NCCL's channels for the size cap the send (p2p_send_price.h played_bytes); a
      // link load still counts its bytes.
      const double played =
          route_class == LinkClass::network
              ? bytes * platform_.network / pricing.network_share()
              : pricing.played_bytes(bytes, p_.members[static_cast<std::size_t>(sender)].rank,
                                     p_.members[static_cast<std::size_t>(receiver)].rank);
      p_.flow.transfers.push_back(
          {.route = route,
           .bytes = played,
           .played_per_wire_byte =
               route_class == LinkClass::network || !(bytes > 0.0) ? 1.0 : played / bytes,
           .delay_s = pricing.delay_s(latency, bytes, route_class),
           .step = 0});
      p_.transfer_members.resize(p_.flow.transfers.size(), {-1, -1});
      p_.transfer_members.back() = {sender, receiver};
      const int t = static_cast<int>(p_.flow.transfers.size()) - 1;
      p_.members[static_cast<std::size_t>(sender)].steps = {{t}};
      p_.members[static_cast<std::size_t>(receiver)].steps = {{t}};
      inst.fixed_latency_s = latency.base_us * 1e-6;
      p_.instances.push_back(std::move(inst));
      return info;
    }
    CollectiveSpec spec = replay_spec(op, n);
    if (op.kind == OpKind::all_to_all_v) {  // row c of the matrix: what comm rank c sends
      spec.matrix.clear();
      for (int member : slots) {
        const std::vector<std::size_t>& counts = matched_.op_of(trace_, member).counts;
        if (counts.size() != static_cast<std::size_t>(n)) {
          throw ConfigError("trace: " + op_label(trace_, op) + ": all_to_all_v needs " +
                            std::to_string(n) + " send counts per rank, a rank has " +
                            std::to_string(counts.size()));
        }
        spec.matrix.insert(spec.matrix.end(), counts.begin(), counts.end());
      }
    }
    const std::vector<int>& ranks = trace_.communicators[static_cast<std::size_t>(op.comm)].ranks;
    const Tuner& tuner = policy_.tuner(ranks);  // built at the communicator's first collective
    const Decision choice = choose(spec, op, ranks);
    info.algorithm = choice.algorithm;
    info.protocol = choice.protocol.value_or(Protocol::simple);
    Resolved r;
    r.spec = spec;
    r.dtype = op.dtype;
    r.algorithm = choice.algorithm;
    r.protocol = info.protocol;
    r.params = tuner.schedule_params();
    r.params.channels = 0;  // flow's default
    r.software_latency = options_.software_latency;
    const PricedCall priced = price_call(tuner, r);
    const RingForm ring = n > options_.bulk_ring_above_ranks ? RingForm::bulk : RingForm::steps;
    const std::size_t first = p_.flow.transfers.size();
    check_replay_call(trace_, op, n, priced.schedule, priced.params.channels, first);
    const CallFlows flows = add_call_flows(tuner, r, priced, ring, routes_, p_.flow);
    inst.fixed_latency_s = flows.fixed_latency_s;
    info.bulk = flows.bulk;
    for (int c = 0; c < n; ++c) {
      p_.members[static_cast<std::size_t>(inst.members[static_cast<std::size_t>(c)])].steps =
          std::move(p_.flow.rank_steps[static_cast<std::size_t>(c)]);
    }
    p_.flow.rank_steps.clear();
    p_.transfer_members.resize(p_.flow.transfers.size(), {-1, -1});
    for (std::size_t t = first; t < p_.flow.transfers.size(); ++t) {  // src/dst: call ranks
      const FlowTransfer& tr = p_.flow.transfers[t];
      p_.transfer_members[t] = {inst.members[static_cast<std::size_t>(tr.src_rank)],
                                inst.members[static_cast<std::size_t>(tr.dst_rank)]};
    }
    p_.instances.push_back(std::move(inst));
    return info;
  }

  // The communicator's send pricing, made at its first send/recv (its Tuner's, built then too).
  const SendPricing& send_pricing(int comm) {
    auto it = send_pricing_.find(comm);
    if (it == send_pricing_.end()) {
      const std::vector<int>& ranks = trace_.communicators[static_cast<std::size_t>(comm)].ranks;
      it = send_pricing_.try_emplace(comm, policy_.tuner(ranks)).first;
    }
    return it->second;
  }

  // The policy's decision: an algorithm forced by the options where it exists for the collective,
  // else the one the op recorded, else the tuner's; a forced protocol where the algorithm runs it.
  Decision choose(const CollectiveSpec& spec, const TraceOp& op,
                  const std::vector<int>& ranks) const {
    try {
      return policy_.resolve(spec, op.dtype, ranks,
                             Forced{options_.algorithm, options_.protocol,
                                    ForcedScope::where_it_applies, op.algorithm});
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("trace replay: " + op_label(trace_, op) + ": " + e.what());
    }
  }

  const Trace& trace_;
  const MatchedTrace& matched_;
  const ReplayOptions& options_;
  const topo::Topology& topology_;
  ReplayProgram& p_;
  LinkScale platform_;  // the platform's link shares, every call's (platform_links)
  RouteTable routes_;
  SelectionPolicy policy_;  // one Tuner per communicator, built at its first collective
  std::map<int, SendPricing> send_pricing_;  // by communicator, at its first send/recv
};

// Per rank, its events (see the top of this file), on check_and_match's member numbering.
void add_events(const Trace& trace, const MatchedTrace& matched, const ReplayOptions& options,
                double flops_per_second, ReplayProgram& program) {
  program.rank_events.resize(trace.ranks.size());
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    const RankTrace& rt = trace.ranks[r];
    std::vector<ReplayEvent>& events = program.rank_events[r];
    const double slowdown =
        r < options.rank_compute_slowdown.size() ? options.rank_compute_slowdown[r] : 1.0;
    for (const TraceEvent& e : rt.events) {
      if (e.kind == TraceEventKind::compute) {
        const double seconds =
            slowdown * (e.seconds * options.compute_scale + e.flops / flops_per_second);
        events.push_back({ReplayEventKind::compute, -1, seconds});
      } else {
        events.push_back(
            {e.kind == TraceEventKind::wait ? ReplayEventKind::wait : ReplayEventKind::issue,
             matched.base[r] + e.op, 0.0});
      }
    }
    for (std::size_t i = 0; i < rt.ops.size(); ++i) {
      events.push_back({ReplayEventKind::wait, matched.base[r] + static_cast<int>(i), 0.0});
    }
  }
}

}  // namespace

void build_replay_program(const Trace& trace, const MatchedTrace& matched,
                          const topo::Topology& topology, const ReplayOptions& options,
                          double flops_per_second, ReplayProgram& program,
                          std::vector<InstanceInfo>& info) {
  Builder(trace, matched, topology, options, program).build(info);
  program.batches = matched.batches;
  check_replay_cost(trace, info, program);
  add_events(trace, matched, options, flops_per_second, program);
}

}  // namespace twinccl::sim::detail
