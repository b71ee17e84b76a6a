// A Trace lowered to a ReplayProgram (replay_program.h).
//
// How it works. Ops of different ranks are matched into instances: a collective by (communicator,
// seq), a send/recv pair by (communicator, sender, receiver, k). Ranks must agree on kind, count
// and dtype; every rank of the communicator must be there. Each communicator has one Tuner (its
// ranks' GPUs on the topology, built once); each collective asks it which algorithm and protocol
// (a forced one, ReplayOptions' or the op's, is kept and checked) and plays that choice as flow
// does (tuner_flow.cc: channels, rails, NCCL's latencies and protocol costs): NVLS as switch flows,
// others as their Schedule on the communicator's GPUs, or, for a ring all_reduce/reduce_scatter/
// all_gather on more ranks than bulk_ring_above_ranks, one "bulk" flow per rank and rail to its
// ring successor carrying the bytes of all L steps, the L per-hop delays and L-1 route latencies
// being added to the fixed latency (exact without contention when the chunks are equal; it keeps
// the links loaded for the whole operation, so concurrent operations still contend). Per rank,
// stream batches are one op, or the ops of one group on one communicator; events become
// compute/issue/wait, then a wait for every op of the rank.
#include <algorithm>
#include <map>
#include <tuple>

#include "flow_build.h"
#include "model.h"
#include "replay_build.h"
#include "tuner_internal.h"
#include "twinccl/errors.h"

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

std::string label(const Trace& t, const TraceOp& op) {
  return std::string(name(op.kind)) + " #" + std::to_string(op.seq) + " on comm '" +
         t.communicators[static_cast<std::size_t>(op.comm)].name + "'";
}

CollectiveSpec spec_of(const TraceOp& op, int nranks) {
  CollectiveSpec spec;
  spec.kind = op.kind;
  spec.nranks = nranks;
  spec.count = op.count;
  spec.root = std::max(0, op.root);
  if (op.kind == OpKind::all_to_all_v) {
    spec.matrix = op.counts;
  } else {
    spec.counts = op.counts;
  }
  if (op.kind == OpKind::barrier) {  // NCCL has no barrier: an all_reduce of one element
    spec.kind = OpKind::all_reduce;
    spec.count = 1;
  }
  return spec;
}

class Builder {
 public:
  Builder(const Trace& t, const topo::Topology& topology, const ReplayOptions& o, double flops_per_second,
          ReplayProgram& p)
      : trace_(t), options_(o), topology_(topology), flops_per_second_(flops_per_second), p_(p),
        routes_(topology, init_flow(p, t.world_size()),
                LinkScale{.network = network_efficiency(view_of(topology, std::max(1, t.world_size())))}) {}

  void build(std::vector<InstanceInfo>& info) {
    match();
    for (std::size_t i = 0; i < pending_.size(); ++i) info.push_back(lower(static_cast<int>(i)));
    make_batches_and_events();
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
          pending_.push_back({&op, r, std::vector<int>(slots, -1), std::vector<const TraceOp*>(slots, nullptr)});
        }
        Pending& pend = pending_[static_cast<std::size_t>(it->second)];
        check_agree(*pend.first, pend.first_rank, op, r);
        const int slot = is_p2p(op.kind) ? (op.kind == OpKind::send ? 0 : 1) : me;
        int& member = pend.member_of_comm_rank[static_cast<std::size_t>(slot)];
        if (member >= 0) {
          throw ConfigError("trace: rank " + std::to_string(r) + " issues " + label(trace_, op) + " twice");
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
        const TraceCommunicator& comm = trace_.communicators[static_cast<std::size_t>(pend.first->comm)];
        if (is_p2p(pend.first->kind)) {
          missing = s == 0 ? "the matching send" : "the matching recv";
        } else {
          missing += (missing.empty() ? "rank " : ", ") + std::to_string(comm.ranks[s]);
        }
      }
      if (!missing.empty()) {
        throw ConfigError("trace: " + label(trace_, *pend.first) + " (rank " + std::to_string(pend.first_rank) +
                          ") has no counterpart: missing " + missing);
      }
    }
  }

  void check_agree(const TraceOp& a, int ra, const TraceOp& b, int rb) const {
    const bool pair = is_p2p(a.kind) && is_p2p(b.kind) && a.kind != b.kind;
    std::string what;
    if (a.kind != b.kind && !pair) what = "kind " + std::string(name(b.kind)) + " vs " + std::string(name(a.kind));
    else if (a.count != b.count) what = "count=" + std::to_string(b.count) + " vs " + std::to_string(a.count);
    else if (a.dtype != b.dtype) what = "dtype " + std::string(name(b.dtype)) + " vs " + std::string(name(a.dtype));
    else if (a.counts != b.counts && a.kind != OpKind::all_to_all_v) what = "different per-rank counts";
    if (!what.empty()) {
      throw ConfigError("trace: " + label(trace_, a) + ": rank " + std::to_string(rb) + " and rank " +
                        std::to_string(ra) + " disagree: " + what);
    }
  }

  TransferCost cost_for(const std::string& algorithm, OpKind kind, DataType dtype, Protocol protocol) const {
    TransferCost cost;
    cost.element_bytes = static_cast<double>(size_of(dtype));
    cost.wire_bytes_per_byte = kNccl.wire_bytes_per_byte[index_of(protocol)];
    if (options_.software_latency) {
      const NcclAlgo la = latency_algo(nccl_algo_for(algorithm, kind));
      for (std::size_t c = 0; c < 3; ++c) {
        cost.delay_by_route_class_s[c] = at(kNccl.hop_latency_us[c], la, index_of(protocol)) * 1e-6;
      }
    }
    return cost;
  }

  double base_latency_s(const std::string& algorithm, OpKind kind, Protocol protocol, int nranks) const {
    if (!options_.software_latency || nranks < 2) return 0.0;
    return at(kNccl.base_latency_us, latency_algo(nccl_algo_for(algorithm, kind)), index_of(protocol)) * 1e-6;
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
      if (p_.members[static_cast<std::size_t>(sender)].rank == p_.members[static_cast<std::size_t>(receiver)].rank) {
        p_.instances.push_back(std::move(inst));  // to itself: a local copy, no network, no time
        return info;
      }
      const int route = routes_.route_id(p_.members[static_cast<std::size_t>(sender)].rank,
                                         p_.members[static_cast<std::size_t>(receiver)].rank);
      const TransferCost cost = cost_for("ring", OpKind::all_reduce, op.dtype, Protocol::simple);
      add_transfer(route, cost.bytes(op.count), cost.delay_s(routes_.route_class(route)), sender, receiver);
      p_.members[static_cast<std::size_t>(sender)].steps = {{last_transfer()}};
      p_.members[static_cast<std::size_t>(receiver)].steps = {{last_transfer()}};
      inst.fixed_latency_s = base_latency_s("ring", OpKind::all_reduce, Protocol::simple, 2);
      p_.instances.push_back(std::move(inst));
      return info;
    }
    CollectiveSpec spec = spec_of(op, n);
    if (op.kind == OpKind::all_to_all_v) {  // row c of the matrix: what comm rank c sends
      spec.matrix.clear();
      for (const TraceOp* o : pend.ops) {
        if (o->counts.size() != static_cast<std::size_t>(n)) {
          throw ConfigError("trace: " + label(trace_, op) + ": all_to_all_v needs " + std::to_string(n) +
                            " send counts per rank, a rank has " + std::to_string(o->counts.size()));
        }
        spec.matrix.insert(spec.matrix.end(), o->counts.begin(), o->counts.end());
      }
    }
    const Tuner& tuner = tuner_of(op.comm);
    const Choice choice = choose(tuner, spec, op);
    info.algorithm = choice.algorithm;
    info.protocol = choice.protocol;
    Resolved r;
    r.spec = spec;
    r.dtype = op.dtype;
    r.algorithm = choice.algorithm;
    r.protocol = choice.protocol;
    r.params = tuner.schedule_params();
    r.params.channels = 0;  // flow's default
    r.software_latency = options_.software_latency;
    const FlowPlan plan = flow_plan(tuner, r);
    inst.fixed_latency_s = plan.fixed_latency_s;
    const bool ring_kind = spec.kind == OpKind::all_reduce || spec.kind == OpKind::reduce_scatter ||
                           spec.kind == OpKind::all_gather;
    const std::size_t first = p_.flow.transfers.size();
    if (plan.nvls && lower_nvls(tuner, r, comm, inst)) {
      info.bulk = true;  // one round of switch flows
    } else if (info.algorithm == "ring" && ring_kind && n > options_.bulk_ring_above_ranks && n > 1) {
      info.bulk = true;
      lower_bulk_ring(spec, plan, inst);
    } else {
      const Schedule schedule = build_schedule(spec, plan.schedule, plan.params);
      program_from_schedule(schedule, plan.cost, routes_, p_.flow, plan.gpus);
      for (int c = 0; c < n; ++c) {
        p_.members[static_cast<std::size_t>(inst.members[static_cast<std::size_t>(c)])].steps =
            std::move(p_.flow.rank_steps[static_cast<std::size_t>(c)]);
      }
      p_.flow.rank_steps.clear();
    }
    p_.transfer_members.resize(p_.flow.transfers.size(), {-1, -1});
    for (std::size_t t = first; t < p_.flow.transfers.size(); ++t) {  // src/dst: schedule ranks
      FlowTransfer& tr = p_.flow.transfers[t];
      tr.bytes *= wire_factor(topology_, p_.flow, tr.route, plan.links);
      p_.transfer_members[t] = {inst.members[static_cast<std::size_t>(tr.src_rank)],
                                inst.members[static_cast<std::size_t>(tr.dst_rank)]};
    }
    p_.instances.push_back(std::move(inst));
    return info;
  }

  const Tuner& tuner_of(int comm) {
    auto it = tuners_.find(comm);
    if (it == tuners_.end()) {
      const TraceCommunicator& c = trace_.communicators[static_cast<std::size_t>(comm)];
      it = tuners_.try_emplace(comm, topology_, c.ranks, 0, options_.software_latency).first;
    }
    return it->second;
  }

  // The tuner's choice; an algorithm forced by the options (where it exists for the collective)
  // or recorded in the op is kept, and an error when it does not apply. A protocol forced by the
  // options applies where the algorithm runs it (others keep the tuner's).
  Choice choose(const Tuner& tuner, const CollectiveSpec& spec, const TraceOp& op) const {
    TunerCall call;
    call.spec = spec;
    call.dtype = op.dtype;
    call.algorithm = op.algorithm;
    if (!options_.algorithm.empty()) {
      for (const Algorithm* a : algorithms_for(spec.kind)) {
        if (a->name() == options_.algorithm) call.algorithm = options_.algorithm;
      }
      if (options_.algorithm == detail::kNvlsTree && spec.kind == OpKind::all_reduce) {
        call.algorithm = options_.algorithm;
      }
    }
    Choice choice;
    try {
      choice = tuner.choose(call);
      if (options_.protocol && choice.protocol != *options_.protocol) {
        const std::vector<Protocol> ps = protocols_applicable(choice.algorithm, spec.kind);
        if (std::find(ps.begin(), ps.end(), *options_.protocol) != ps.end() ||
            call.algorithm.empty()) {
          call.protocol = options_.protocol;
          try {
            choice = tuner.choose(call);
          } catch (const InvalidArgument&) {  // no algorithm runs it: the tuner's stands
          }
        }
      }
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("trace replay: " + label(trace_, op) + ": " + e.what());
    }
    return choice;
  }

  // NVLS/NVLS-tree as switch flows (flow_nvls.cc) on a communicator of GPUs 0..n-1: every flow a
  // step of its rank's member. False = play the schedule.
  bool lower_nvls(const Tuner& tuner, const Resolved& r, const TraceCommunicator& comm,
                  ReplayInstance& inst) {
    for (std::size_t i = 0; i < comm.ranks.size(); ++i) {
      if (comm.ranks[i] != static_cast<int>(i)) return false;
    }
    const std::size_t first = p_.flow.transfers.size();
    const auto algo = *nccl_algo_for(r.algorithm, r.spec.kind);
    const std::size_t rounds = p_.flow.rounds.size();
    if (!program_for_nvls(topology_, tuner.view(), r, algo, routes_, p_.flow)) return false;
    p_.flow.rounds.resize(rounds);  // the replay plays steps, not rounds
    p_.flow.round_sequence.clear();
    p_.flow.compressed = false;
    for (std::size_t t = first; t < p_.flow.transfers.size(); ++t) {
      const int rank = p_.flow.transfers[t].src_rank;
      auto& steps = p_.members[static_cast<std::size_t>(inst.members[static_cast<std::size_t>(rank)])].steps;
      if (steps.empty()) steps.emplace_back();
      // GPU <-> NVSwitch: the member is both ends, so the flow is listed for both (playback
      // starts a transfer when its two sides reached it).
      steps.front().insert(steps.front().end(), 2, static_cast<int>(t));
    }
    return true;
  }

  // Per rail (rotation of plan.gpus) and ring position c: one flow c -> c+1 of the rail's share
  // of all steps' bytes, as program_for_ring's rounds summed.
  void lower_bulk_ring(const CollectiveSpec& spec, const FlowPlan& plan, ReplayInstance& inst) {
    const int n = spec.nranks;
    const auto un = static_cast<std::size_t>(n);
    const bool all_reduce = spec.kind == OpKind::all_reduce;
    const double steps = all_reduce ? 2.0 * (n - 1) : n - 1.0;
    const std::size_t chunk = all_reduce ? (spec.count + un - 1) / un : spec.count;
    const std::size_t channels = static_cast<std::size_t>(std::max(1, plan.params.channels));
    std::vector<double> share(plan.gpus.distinct(), 0.0);
    for (std::size_t c = 0; c < channels; ++c) {
      share[plan.gpus.rotation_of(static_cast<int>(c))] += 1.0 / static_cast<double>(channels);
    }
    double max_delay = 0.0, max_latency = 0.0;
    for (std::size_t rot = 0; rot < share.size(); ++rot) {
      if (share[rot] == 0.0) continue;
      for (int c = 0; c < n; ++c) {
        const int ch = static_cast<int>(rot);
        const int route = routes_.route_id(plan.gpus.topology_rank(c, ch), plan.gpus.topology_rank((c + 1) % n, ch));
        max_delay = std::max(max_delay, plan.cost.delay_s(routes_.route_class(route)));
        max_latency = std::max(max_latency, p_.flow.routes[static_cast<std::size_t>(route)].latency_s);
        const int from = inst.members[static_cast<std::size_t>(c)];
        const int to = inst.members[static_cast<std::size_t>((c + 1) % n)];
        add_transfer(route, plan.cost.bytes_exact(static_cast<double>(chunk) * steps * share[rot]), 0.0, from, to);
        p_.flow.transfers.back().src_rank = c;
        p_.flow.transfers.back().dst_rank = (c + 1) % n;
        for (int m : {from, to}) {
          auto& member_steps = p_.members[static_cast<std::size_t>(m)].steps;
          if (member_steps.empty()) member_steps.emplace_back();
          member_steps.front().push_back(last_transfer());
        }
      }
    }
    inst.fixed_latency_s += steps * max_delay + (steps - 1.0) * max_latency;
  }

  void add_transfer(int route, double bytes, double delay_s, int sender, int receiver) {
    p_.flow.transfers.push_back({.route = route, .bytes = bytes, .delay_s = delay_s, .step = 0});
    p_.transfer_members.resize(p_.flow.transfers.size(), {-1, -1});
    p_.transfer_members.back() = {sender, receiver};
  }
  int last_transfer() const { return static_cast<int>(p_.flow.transfers.size()) - 1; }

  double compute_seconds(const TraceEvent& e) const {
    return e.seconds * options_.compute_scale + e.flops / flops_per_second_;
  }

  void make_batches_and_events() {
    p_.rank_events.resize(trace_.ranks.size());
    for (std::size_t r = 0; r < trace_.ranks.size(); ++r) {
      const RankTrace& rt = trace_.ranks[r];
      std::map<int, int> last_batch;                 // comm -> last batch on its stream
      std::map<std::pair<int, int>, int> open_group;  // (comm, group) -> batch
      std::vector<ReplayEvent>& events = p_.rank_events[r];
      for (const TraceEvent& e : rt.events) {
        if (e.kind == TraceEventKind::compute) {
          events.push_back({ReplayEventKind::compute, -1, compute_seconds(e)});
          continue;
        }
        const int m = member_of_op_[r][static_cast<std::size_t>(e.op)];
        if (e.kind == TraceEventKind::wait) {
          events.push_back({ReplayEventKind::wait, m, 0.0});
          continue;
        }
        const TraceOp& op = rt.ops[static_cast<std::size_t>(e.op)];
        ReplayMember& member = p_.members[static_cast<std::size_t>(m)];
        if (member.batch >= 0) {
          throw ConfigError("trace: rank " + std::to_string(r) + " issues op " + std::to_string(e.op) + " (" +
                            label(trace_, op) + ") twice in its events");
        }
        const auto group_key = std::make_pair(op.comm, op.group);
        const auto open = op.group > 0 ? open_group.find(group_key) : open_group.end();
        if (open != open_group.end()) {
          member.batch = open->second;
        } else {
          member.batch = static_cast<int>(p_.batches.size());
          ReplayBatch batch;
          const auto last = last_batch.find(op.comm);
          if (last != last_batch.end()) {
            batch.previous = last->second;
            p_.batches[static_cast<std::size_t>(last->second)].next = member.batch;
          }
          p_.batches.push_back(std::move(batch));
          last_batch[op.comm] = member.batch;
          if (op.group > 0) open_group[group_key] = member.batch;
        }
        p_.batches[static_cast<std::size_t>(member.batch)].members.push_back(m);
        events.push_back({ReplayEventKind::issue, m, 0.0});
      }
      for (std::size_t i = 0; i < rt.ops.size(); ++i) {
        const int m = member_of_op_[r][i];
        if (p_.members[static_cast<std::size_t>(m)].batch < 0) {
          throw ConfigError("trace: rank " + std::to_string(r) + " op " + std::to_string(i) + " (" +
                            label(trace_, rt.ops[i]) + ") is never issued in its events");
        }
        events.push_back({ReplayEventKind::wait, m, 0.0});
      }
    }
  }

  const Trace& trace_;
  const ReplayOptions& options_;
  const topo::Topology& topology_;
  double flops_per_second_;
  ReplayProgram& p_;
  RouteTable routes_;
  std::map<int, Tuner> tuners_;  // per communicator, built at its first collective
  std::vector<Pending> pending_;
  std::vector<std::vector<int>> member_of_op_;  // per rank, per op: its member
};

}  // namespace

void build_replay_program(const Trace& trace, const topo::Topology& topology, const ReplayOptions& options,
                          double flops_per_second, ReplayProgram& program, std::vector<InstanceInfo>& info) {
  Builder(trace, topology, options, flops_per_second, program).build(info);
}

}  // namespace twinccl::sim::detail
