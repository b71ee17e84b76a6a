// A Trace lowered to a ReplayProgram (replay_program.h).
//
// How it works. Ops of different ranks are matched into instances: a collective by (communicator,
// seq), a send/recv pair by (communicator, sender, receiver, k). Ranks must agree on kind, count
// and dtype; every rank of the communicator must be there. Each communicator has one Tuner (its
// ranks' GPUs on the topology, built once); each collective asks it which algorithm and protocol
// (a forced one, ReplayOptions' or the op's, is kept and checked) and is priced and lowered to
// flows by the one owner of pricing (transfer_pricing.h), exactly as flow prices one call: NVLS as
// switch flows, others as their Schedule on the communicator's GPUs, or, for a ring
// all_reduce/reduce_scatter/all_gather on more ranks than bulk_ring_above_ranks, one bulk flow per
// rank and rail. Each call rank's steps become its member's steps. Then per rank, stream batches
// and events (replay_events.cc).
#include "replay_build.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "trace_analysis.h"
#include "transfer_pricing.h"
#include "tuner_internal.h"
#include "twinccl/errors.h"
#include "twinccl/op_traits.h"
#include "twinccl/sim/selection.h"

namespace twinccl::sim::detail {
namespace {

struct Key {
  int comm;
  int src, dst;  // p2p only (comm ranks), else -1
  std::uint64_t seq;
  auto operator<=>(const Key&) const = default;
};

struct Pending {
  const TraceOp* first = nullptr;
  int first_rank = 0;
  std::vector<int> member_of_comm_rank;  // collectives: by comm rank; p2p: {sender, receiver}
  std::vector<const TraceOp*> ops;       // the same order: each member's op
};

int comm_rank_of(const TraceCommunicator& c, int world_rank) {
  return static_cast<int>(std::find(c.ranks.begin(), c.ranks.end(), world_rank) - c.ranks.begin());
}

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
  Builder(const Trace& t, const topo::Topology& topology, const ReplayOptions& o, ReplayProgram& p)
      : trace_(t),
        options_(o),
        topology_(topology),
        p_(p),
        routes_(topology, init_flow(p, t.world_size()),
                platform_links(topology, options_.software_latency)),
        // The caller's topology, not owned (it outlives the build).
        policy_(std::shared_ptr<const topo::Topology>(std::shared_ptr<const topo::Topology>(),
                                                      &topology),
                PolicyOptions{.software_latency = o.software_latency}) {}

  // Returns, per rank and op, its member.
  std::vector<std::vector<int>> build(std::vector<InstanceInfo>& info) {
    match();
    for (std::size_t i = 0; i < pending_.size(); ++i) {
      info.push_back(lower(static_cast<int>(i)));
      const TraceOp& op = *info.back().first;
      const std::size_t n = trace_.communicators[static_cast<std::size_t>(op.comm)].ranks.size();
      check_replay_call(trace_, op, is_p2p(op.kind) ? 2 : static_cast<int>(n),
                        info.back().algorithm, -1, p_.flow.transfers.size());
    }
    return std::move(member_of_op_);
  }

 private:
  static FlowProgram& init_flow(ReplayProgram& p, int n) {
    p.flow.nranks = n;
    return p.flow;
  }

  void match() {
    std::map<Key, int> index;
    member_of_op_.resize(trace_.ranks.size());
    for (int r = 0; r < trace_.world_size(); ++r) {
      const RankTrace& rt = trace_.ranks[static_cast<std::size_t>(r)];
      for (const TraceOp& op : rt.ops) {
        const TraceCommunicator& comm = trace_.communicators[static_cast<std::size_t>(op.comm)];
        const int me = comm_rank_of(comm, r);
        Key key{op.comm, -1, -1, op.seq};
        if (op.kind == OpKind::send) key = {op.comm, me, op.peer, op.seq};
        if (op.kind == OpKind::recv) key = {op.comm, op.peer, me, op.seq};
        auto [it, fresh] = index.try_emplace(key, static_cast<int>(pending_.size()));
        if (fresh) {
          const std::size_t slots = is_p2p(op.kind) ? 2 : comm.ranks.size();
          pending_.push_back(
              {&op, r, std::vector<int>(slots, -1), std::vector<const TraceOp*>(slots, nullptr)});
        }
        Pending& pend = pending_[static_cast<std::size_t>(it->second)];
        check_agree(*pend.first, pend.first_rank, op, r);
        const int slot = is_p2p(op.kind) ? (op.kind == OpKind::send ? 0 : 1) : me;
        int& member = pend.member_of_comm_rank[static_cast<std::size_t>(slot)];
        if (member >= 0) {
          throw ConfigError("trace: rank " + std::to_string(r) + " issues " + op_label(trace_, op) +
                            " twice");
        }
        member = static_cast<int>(p_.members.size());
        pend.ops[static_cast<std::size_t>(slot)] = &op;
        p_.members.push_back({.rank = r, .instance = it->second, .batch = -1, .steps = {}});
        member_of_op_[static_cast<std::size_t>(r)].push_back(member);
      }
    }
    for (const Pending& pend : pending_) {
      std::string missing;
      for (std::size_t s = 0; s < pend.member_of_comm_rank.size(); ++s) {
        if (pend.member_of_comm_rank[s] >= 0) continue;
        const TraceCommunicator& comm =
            trace_.communicators[static_cast<std::size_t>(pend.first->comm)];
        if (is_p2p(pend.first->kind)) {
          missing = s == 0 ? "the matching send" : "the matching recv";
        } else {
          missing += (missing.empty() ? "rank " : ", ") + std::to_string(comm.ranks[s]);
        }
      }
      if (!missing.empty()) {
        throw ConfigError("trace: " + op_label(trace_, *pend.first) + " (rank " +
                          std::to_string(pend.first_rank) + ") has no counterpart: missing " +
                          missing);
      }
    }
  }

  void check_agree(const TraceOp& a, int ra, const TraceOp& b, int rb) const {
    const bool pair = is_p2p(a.kind) && is_p2p(b.kind) && a.kind != b.kind;
    std::string what;
    if (a.kind != b.kind && !pair)
      what = "kind " + std::string(name(b.kind)) + " vs " + std::string(name(a.kind));
    else if (a.count != b.count)
      what = "count=" + std::to_string(b.count) + " vs " + std::to_string(a.count);
    else if (a.dtype != b.dtype)
      what = "dtype " + std::string(name(b.dtype)) + " vs " + std::string(name(a.dtype));
    else if (a.counts != b.counts && a.kind != OpKind::all_to_all_v)
      what = "different per-rank counts";
    if (!what.empty()) {
      throw ConfigError("trace: " + op_label(trace_, a) + ": rank " + std::to_string(rb) +
                        " and rank " + std::to_string(ra) + " disagree: " + what);
    }
  }

  InstanceInfo lower(int i) {
    const Pending& pend = pending_[static_cast<std::size_t>(i)];
    const TraceOp& op = *pend.first;
    const TraceCommunicator& comm = trace_.communicators[static_cast<std::size_t>(op.comm)];
    const int n = static_cast<int>(comm.ranks.size());
    InstanceInfo info{.first = &op, .algorithm = {}, .bulk = false};
    ReplayInstance inst;
    inst.members = pend.member_of_comm_rank;
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
      const PricedCall priced = price_p2p(op.dtype, options_.software_latency);
      p_.flow.transfers.push_back({.route = route,
                                   .bytes = priced.cost.bytes(op.count),
                                   .delay_s = priced.cost.delay_s(routes_.route_class(route)),
                                   .step = 0});
      p_.transfer_members.resize(p_.flow.transfers.size(), {-1, -1});
      p_.transfer_members.back() = {sender, receiver};
      const int t = static_cast<int>(p_.flow.transfers.size()) - 1;
      p_.members[static_cast<std::size_t>(sender)].steps = {{t}};
      p_.members[static_cast<std::size_t>(receiver)].steps = {{t}};
      inst.fixed_latency_s = priced.fixed_latency_s;
      p_.instances.push_back(std::move(inst));
      return info;
    }
    CollectiveSpec spec = replay_spec(op, n);
    if (op.kind == OpKind::all_to_all_v) {  // row c of the matrix: what comm rank c sends
      spec.matrix.clear();
      for (const TraceOp* o : pend.ops) {
        if (o->counts.size() != static_cast<std::size_t>(n)) {
          throw ConfigError("trace: " + op_label(trace_, op) + ": all_to_all_v needs " +
                            std::to_string(n) + " send counts per rank, a rank has " +
                            std::to_string(o->counts.size()));
        }
        spec.matrix.insert(spec.matrix.end(), o->counts.begin(), o->counts.end());
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
  const ReplayOptions& options_;
  const topo::Topology& topology_;
  ReplayProgram& p_;
  RouteTable routes_;
  SelectionPolicy policy_;  // one Tuner per communicator, built at its first collective
  std::vector<Pending> pending_;
  std::vector<std::vector<int>> member_of_op_;  // per rank, per op: its member
};

}  // namespace

void build_replay_program(const Trace& trace, const topo::Topology& topology,
                          const ReplayOptions& options, double flops_per_second,
                          ReplayProgram& program, std::vector<InstanceInfo>& info) {
  const std::vector<std::vector<int>> member_of_op =
      Builder(trace, topology, options, program).build(info);
  check_replay_cost(trace, info, program);
  add_batches_and_events(trace, options, flops_per_second, member_of_op, program);
}

}  // namespace twinccl::sim::detail
