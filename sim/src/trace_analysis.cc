// The cross-rank checks of a trace and a dry run of its replay (trace_analysis.h).
//
// How it works. Matching: a collective is keyed (communicator, seq), a send/recv pair
// (communicator, sender, receiver, k); every key gets one slot per comm rank (two for send/recv)
// and every op fills its slot, so a duplicate, a disagreement (kind, count, dtype, root, counts)
// and a missing counterpart are seen with both ranks named. Order: every rank's collectives of a
// communicator, in issue order, are compared with its comm rank 0's. Dry run: the replay's rules
// without time (replay_program.h: a batch is one op or one group on one communicator's stream;
// it starts when all its ops were issued and the stream's previous batch finished; an operation
// finishes once all its members' batches started; a wait blocks its rank until its op finished;
// every rank waits for all its ops at the end). Those rules are monotone (nothing that became
// possible becomes impossible later), so whether a replay ends does not depend on durations and
// this zero-time run reaches the same end state SimGrid would, in time linear in the trace. A
// rank left blocked is a deadlock, reported with the op it waits for and why that op cannot start.
// Example, 2 ranks on 'dp': rank 0 runs all_reduce #0 then all_gather #1, rank 1 the reverse;
// the order check reports it before the dry run would.
#include "trace_analysis.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "twinccl/errors.h"

namespace twinccl::sim::detail {
namespace {

struct Key {
  int comm;
  int src, dst;  // send/recv: comm ranks; collectives: -1
  std::uint64_t seq;
  auto operator<=>(const Key&) const = default;
};

class Analysis {
 public:
  Analysis(const Trace& t, std::string_view source, const std::vector<std::vector<std::pair<int, int>>>& membership)
      : t_(t), source_(source), membership_(membership) {}

  void run() {
    index_members();
    match();
    check_order();
    build_batches();
    dry_run();
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw ConfigError(std::string(source_) + ": " + what); }

  // Where communicator `comm` is in rank r's membership list (check_trace made sure it is).
  std::size_t entry(int r, int comm) const {
    const auto& list = membership_[static_cast<std::size_t>(r)];
    return static_cast<std::size_t>(std::lower_bound(list.begin(), list.end(), std::make_pair(comm, -1)) - list.begin());
  }
  int comm_rank(int r, int comm) const { return membership_[static_cast<std::size_t>(r)][entry(r, comm)].second; }
  const TraceOp& op_of(int m) const {
    return t_.ranks[static_cast<std::size_t>(rank_of_[static_cast<std::size_t>(m)])]
        .ops[static_cast<std::size_t>(m - base_[static_cast<std::size_t>(rank_of_[static_cast<std::size_t>(m)])])];
  }
  std::string label(int m) const { return op_label(t_, op_of(m)); }
  std::string at(int m) const {
    const int r = rank_of_[static_cast<std::size_t>(m)];
    return "ranks[" + std::to_string(r) + "].ops[" + std::to_string(m - base_[static_cast<std::size_t>(r)]) + "]";
  }

  void index_members() {
    for (int r = 0; r < t_.world_size(); ++r) {
      base_.push_back(static_cast<int>(rank_of_.size()));
      rank_of_.insert(rank_of_.end(), t_.ranks[static_cast<std::size_t>(r)].ops.size(), r);
    }
    instance_of_.assign(rank_of_.size(), -1);
  }

  void match() {
    std::map<Key, int> index;
    for (int m = 0; m < static_cast<int>(rank_of_.size()); ++m) {
      const TraceOp& op = op_of(m);
      const int me = comm_rank(rank_of_[static_cast<std::size_t>(m)], op.comm);
      Key key{op.comm, -1, -1, op.seq};
      if (op.kind == OpKind::send) key = {op.comm, me, op.peer, op.seq};
      if (op.kind == OpKind::recv) key = {op.comm, op.peer, me, op.seq};
      auto [it, fresh] = index.try_emplace(key, static_cast<int>(slots_.size()));
      if (fresh) {
        const std::size_t n = is_p2p(op.kind) ? 2 : t_.communicators[static_cast<std::size_t>(op.comm)].ranks.size();
        slots_.emplace_back(n, -1);
      }
      std::vector<int>& slots = slots_[static_cast<std::size_t>(it->second)];
      const int slot = is_p2p(op.kind) ? (op.kind == OpKind::send ? 0 : 1) : me;
      for (int other : slots) {
        if (other >= 0) {
          check_agree(other, m);
          break;
        }
      }
      int& filled = slots[static_cast<std::size_t>(slot)];
      if (filled >= 0) {
        fail(at(m) + ": rank " + std::to_string(rank_of_[static_cast<std::size_t>(m)]) + " issues " + label(m) +
             " twice (also " + at(filled) + ")");
      }
      filled = m;
      instance_of_[static_cast<std::size_t>(m)] = it->second;
    }
    for (const std::vector<int>& slots : slots_) check_complete(slots);
  }

  void check_agree(int a, int b) const {
    const TraceOp& x = op_of(a);
    const TraceOp& y = op_of(b);
    const bool pair = is_p2p(x.kind) && is_p2p(y.kind) && x.kind != y.kind;
    std::string what;
    if (x.kind != y.kind && !pair) what = "kind " + std::string(name(y.kind)) + " vs " + std::string(name(x.kind));
    else if (x.count != y.count) what = "count=" + std::to_string(y.count) + " vs " + std::to_string(x.count);
    else if (x.dtype != y.dtype) what = "dtype " + std::string(name(y.dtype)) + " vs " + std::string(name(x.dtype));
    else if (is_rooted(x.kind) && x.root != y.root) what = "root=" + std::to_string(y.root) + " vs " + std::to_string(x.root);
    else if (x.counts != y.counts && x.kind != OpKind::all_to_all_v) what = "different per-rank counts";
    if (!what.empty()) {
      fail(label(a) + ": rank " + std::to_string(rank_of_[static_cast<std::size_t>(b)]) + " (" + at(b) + ") and rank " +
           std::to_string(rank_of_[static_cast<std::size_t>(a)]) + " (" + at(a) + ") disagree: " + what);
    }
  }

  void check_complete(const std::vector<int>& slots) const {
    const int first = *std::find_if(slots.begin(), slots.end(), [](int s) { return s >= 0; });
    const TraceOp& op = op_of(first);
    const TraceCommunicator& comm = t_.communicators[static_cast<std::size_t>(op.comm)];
    std::string missing;
    int listed = 0, more = 0;
    for (std::size_t s = 0; s < slots.size(); ++s) {
      if (slots[s] >= 0) continue;
      if (is_p2p(op.kind)) {
        const int peer_world = comm.ranks[static_cast<std::size_t>(op.peer)];
        missing = "rank " + std::to_string(peer_world) + " never issues the matching " + (s == 0 ? "send" : "recv");
      } else if (listed < 8) {
        missing += (listed++ == 0 ? "rank " : ", ") + std::to_string(comm.ranks[s]);
      } else {
        ++more;
      }
    }
    if (missing.empty()) return;
    if (!is_p2p(op.kind)) {
      missing += (more > 0 ? " and " + std::to_string(more) + " more" : std::string()) + (listed + more > 1 ? " never issue it" : " never issues it");
    }
    fail(label(first) + " (" + at(first) + ", rank " + std::to_string(rank_of_[static_cast<std::size_t>(first)]) +
         ") has no counterpart: " + missing);
  }

  // Every rank issues a communicator's collectives in the order its comm rank 0 does.
  void check_order() const {
    std::vector<std::vector<int>> reference(t_.communicators.size());
    for (int pass = 0; pass < 2; ++pass) {
      for (int r = 0; r < t_.world_size(); ++r) {
        const RankTrace& rt = t_.ranks[static_cast<std::size_t>(r)];
        std::vector<std::size_t> position(membership_[static_cast<std::size_t>(r)].size(), 0);  // per communicator
        for (std::size_t e = 0; e < rt.events.size(); ++e) {
          if (rt.events[e].kind != TraceEventKind::op) continue;
          const int m = base_[static_cast<std::size_t>(r)] + rt.events[e].op;
          const TraceOp& op = op_of(m);
          if (is_p2p(op.kind)) continue;
          const auto c = static_cast<std::size_t>(op.comm);
          const int inst = instance_of_[static_cast<std::size_t>(m)];
          if (pass == 0) {
            if (comm_rank(r, op.comm) == 0) reference[c].push_back(inst);
            continue;
          }
          const std::size_t k = position[entry(r, op.comm)]++;
          const int expected = slots_[static_cast<std::size_t>(reference[c][k])][static_cast<std::size_t>(comm_rank(r, op.comm))];
          if (reference[c][k] != inst) {
            const int zero = t_.communicators[c].ranks[0];
            fail("ranks[" + std::to_string(r) + "].events[" + std::to_string(e) + "]: rank " + std::to_string(r) +
                 " issues " + label(m) + " as its collective number " + std::to_string(k) + " on that communicator, "
                 "where rank " + std::to_string(zero) + " issues " + label(expected) + "; every rank must issue a "
                 "communicator's collectives in the same order");
          }
        }
      }
    }
  }

  void build_batches() {
    batch_of_.assign(rank_of_.size(), -1);
    for (int r = 0; r < t_.world_size(); ++r) {
      const RankTrace& rt = t_.ranks[static_cast<std::size_t>(r)];
      std::map<int, int> last;                        // comm -> last batch on its stream
      std::map<std::pair<int, int>, int> open_group;  // (comm, group) -> batch
      for (const TraceEvent& e : rt.events) {
        if (e.kind != TraceEventKind::op) continue;
        const int m = base_[static_cast<std::size_t>(r)] + e.op;
        const TraceOp& op = op_of(m);
        const auto group = open_group.find({op.comm, op.group});
        int b = op.group > 0 && group != open_group.end() ? group->second : -1;
        if (b < 0) {
          b = static_cast<int>(batches_.size());
          batches_.push_back({});
          const auto prev = last.find(op.comm);
          if (prev != last.end()) {
            batches_.back().previous = prev->second;
            batches_[static_cast<std::size_t>(prev->second)].next = b;
          }
          last[op.comm] = b;
          if (op.group > 0) open_group[{op.comm, op.group}] = b;
        }
        batches_[static_cast<std::size_t>(b)].members.push_back(m);
        batch_of_[static_cast<std::size_t>(m)] = b;
      }
    }
  }

  struct Batch {
    std::vector<int> members;
    int previous = -1, next = -1;
    std::size_t issued = 0, done = 0;
    bool started = false;
  };

  void dry_run() {
    const std::size_t n = static_cast<std::size_t>(t_.world_size());
    issued_.assign(rank_of_.size(), 0);
    arrived_.assign(rank_of_.size(), 0);
    done_.assign(rank_of_.size(), 0);
    arrivals_.assign(slots_.size(), 0);
    cursor_.assign(n, 0);
    blocked_on_.assign(n, -1);
    for (int r = static_cast<int>(n) - 1; r >= 0; --r) runnable_.push_back(r);
    while (!runnable_.empty() || !startable_.empty()) {
      if (!startable_.empty()) {
        const int b = startable_.back();
        startable_.pop_back();
        start(b);
        continue;
      }
      const int r = runnable_.back();
      runnable_.pop_back();
      run_rank(r);
    }
    int stuck = 0, first = -1;
    for (int r = 0; r < static_cast<int>(n); ++r) {
      if (blocked_on_[static_cast<std::size_t>(r)] < 0) continue;
      if (first < 0) first = r;
      ++stuck;
    }
    if (first < 0) return;
    const int m = blocked_on_[static_cast<std::size_t>(first)];
    throw DeadlockError(std::string(source_) + ": replay deadlock: rank " + std::to_string(first) + " is stuck at " +
                        position_of(first) + ", which cannot start: " +
                        why_not_started(instance_of_[static_cast<std::size_t>(m)], 0) + " (" + std::to_string(stuck) +
                        " of " + std::to_string(n) + " ranks are stuck)");
  }

  // Runs rank r's events until a wait blocks it or it ends (then it waits for each of its ops).
  void run_rank(int r) {
    const RankTrace& rt = t_.ranks[static_cast<std::size_t>(r)];
    std::size_t& c = cursor_[static_cast<std::size_t>(r)];
    for (; c < rt.events.size() + rt.ops.size(); ++c) {
      const bool end_wait = c >= rt.events.size();
      const TraceEvent* e = end_wait ? nullptr : &rt.events[c];
      if (e != nullptr && e->kind == TraceEventKind::compute) continue;
      const int m = base_[static_cast<std::size_t>(r)] + (end_wait ? static_cast<int>(c - rt.events.size()) : e->op);
      if (e != nullptr && e->kind == TraceEventKind::op) {
        issued_[static_cast<std::size_t>(m)] = 1;
        Batch& b = batches_[static_cast<std::size_t>(batch_of_[static_cast<std::size_t>(m)])];
        if (++b.issued == b.members.size()) startable_.push_back(batch_of_[static_cast<std::size_t>(m)]);
      } else if (!done_[static_cast<std::size_t>(m)]) {
        blocked_on_[static_cast<std::size_t>(r)] = m;
        return;
      }
    }
  }

  // Starts batch b if all its ops were issued and its stream's previous batch is done.
  void start(int b) {
    Batch& batch = batches_[static_cast<std::size_t>(b)];
    if (batch.started || batch.issued != batch.members.size()) return;
    if (batch.previous >= 0 && batches_[static_cast<std::size_t>(batch.previous)].done !=
                                   batches_[static_cast<std::size_t>(batch.previous)].members.size()) {
      return;
    }
    batch.started = true;
    for (int m : batch.members) {
      arrived_[static_cast<std::size_t>(m)] = 1;
      const int i = instance_of_[static_cast<std::size_t>(m)];
      const std::vector<int>& slots = slots_[static_cast<std::size_t>(i)];
      if (++arrivals_[static_cast<std::size_t>(i)] < slots.size()) continue;
      for (int done : slots) finish(done);
    }
  }

  void finish(int m) {
    done_[static_cast<std::size_t>(m)] = 1;
    Batch& batch = batches_[static_cast<std::size_t>(batch_of_[static_cast<std::size_t>(m)])];
    if (++batch.done == batch.members.size() && batch.next >= 0) startable_.push_back(batch.next);
    const int r = rank_of_[static_cast<std::size_t>(m)];
    if (blocked_on_[static_cast<std::size_t>(r)] == m) {
      blocked_on_[static_cast<std::size_t>(r)] = -1;
      runnable_.push_back(r);
    }
  }

  std::string position_of(int r) const {
    const RankTrace& rt = t_.ranks[static_cast<std::size_t>(r)];
    const std::size_t c = cursor_[static_cast<std::size_t>(r)];
    const int m = blocked_on_[static_cast<std::size_t>(r)];
    const std::string what = m >= 0 ? label(m) : "nothing";
    if (c < rt.events.size()) return "ranks[" + std::to_string(r) + "].events[" + std::to_string(c) + "] (wait for " + what + ")";
    return "the end of its events (waiting for " + what + ")";
  }

  // Why operation `instance` did not start: the first member that did not arrive, and why.
  std::string why_not_started(int instance, int depth) const {
    for (int m : slots_[static_cast<std::size_t>(instance)]) {
      if (arrived_[static_cast<std::size_t>(m)]) continue;
      const int q = rank_of_[static_cast<std::size_t>(m)];
      const std::string rank = "rank " + std::to_string(q);
      if (!issued_[static_cast<std::size_t>(m)]) {
        return rank + " never reaches " + label(m) + ": it is stuck at " + position_of(q);
      }
      const Batch& batch = batches_[static_cast<std::size_t>(batch_of_[static_cast<std::size_t>(m)])];
      for (int other : batch.members) {
        if (!issued_[static_cast<std::size_t>(other)]) {
          return rank + " issued " + label(m) + " in a group with " + label(other) + ", which it never issues: it is "
                 "stuck at " + position_of(q);
        }
      }
      if (batch.previous < 0) continue;
      const Batch& previous = batches_[static_cast<std::size_t>(batch.previous)];
      for (int other : previous.members) {
        if (done_[static_cast<std::size_t>(other)]) continue;
        std::string why = rank + " issued " + label(m) + " but its stream on that communicator is still busy with " +
                          label(other);
        if (depth < 2) why += ", which cannot start: " + why_not_started(instance_of_[static_cast<std::size_t>(other)], depth + 1);
        return why;
      }
    }
    return "its ranks wait for each other";
  }

  const Trace& t_;
  std::string_view source_;
  const std::vector<std::vector<std::pair<int, int>>>& membership_;
  std::vector<int> base_;            // per rank: its first member
  std::vector<int> rank_of_;         // per member (= one op of one rank)
  std::vector<int> instance_of_;     // per member
  std::vector<std::vector<int>> slots_;  // per instance: member by comm rank (send, recv)
  std::vector<int> batch_of_;
  std::vector<Batch> batches_;
  // Dry-run state.
  std::vector<char> issued_, arrived_, done_;
  std::vector<std::size_t> arrivals_;  // per instance
  std::vector<std::size_t> cursor_;    // per rank: events, then one end wait per op
  std::vector<int> blocked_on_;        // per rank: the member it waits for, -1
  std::vector<int> runnable_, startable_;
};

}  // namespace

std::string op_label(const Trace& trace, const TraceOp& op) {
  return std::string(name(op.kind)) + " #" + std::to_string(op.seq) + " on comm '" +
         trace.communicators[static_cast<std::size_t>(op.comm)].name + "'";
}

void check_trace_consistency(const Trace& trace, std::string_view source,
                             const std::vector<std::vector<std::pair<int, int>>>& membership) {
  Analysis(trace, source, membership).run();
}

}  // namespace twinccl::sim::detail
