// The dry run of a trace's replay (trace_analysis.h: dry_run).
//
// How it works. The replay's rules without time (replay_program.h): a rank runs its events in
// order, an op event issues its member, a wait blocks the rank until that member finished, and
// after its events the rank waits for each of its ops; a batch starts when all its members were
// issued and the previous batch of its stream finished; an operation finishes as soon as all its
// members' batches started (its transfers then always end). Those rules are monotone (nothing that
// became possible becomes impossible later), so whether a replay ends does not depend on
// durations: this run reaches the state SimGrid would, in time linear in the trace. Ranks still
// blocked at the end are stuck; the first is reported with the op it waits for and the reason
// that op cannot start (a rank that never reaches it, a group never completed, a stream busy with
// an earlier op that cannot start either; followed two levels deep so the message stays short).
// Example, blocking send then recv on both of 2 ranks: rank 0 waits at its send, whose recv rank 1
// never reaches because it waits at its own send.
#include <string>
#include <vector>

#include "trace_analysis.h"
#include "twinccl/errors.h"

namespace twinccl::sim::detail {
namespace {

class DryRun {
 public:
  DryRun(const Trace& t, std::string_view source, const MatchedTrace& m)
      : t_(t), source_(source), m_(m) {}

  void run() {
    const std::size_t n = static_cast<std::size_t>(t_.world_size());
    for (const MatchedTrace::Batch& b : m_.batches) batches_.push_back({&b, 0, 0, false});
    issued_.assign(m_.rank_of.size(), 0);
    arrived_.assign(m_.rank_of.size(), 0);
    done_.assign(m_.rank_of.size(), 0);
    arrivals_.assign(m_.slots.size(), 0);
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
    throw DeadlockError(std::string(source_) + ": replay deadlock: rank " + std::to_string(first) +
                        " is stuck at " + position_of(first) + ", which cannot start: " +
                        why_not_started(m_.instance_of[static_cast<std::size_t>(m)], 0) + " (" +
                        std::to_string(stuck) + " of " + std::to_string(n) + " ranks are stuck)");
  }

 private:
  // Runs rank r's events until a wait blocks it or it ends (then it waits for each of its ops).
  void run_rank(int r) {
    const RankTrace& rt = t_.ranks[static_cast<std::size_t>(r)];
    std::size_t& c = cursor_[static_cast<std::size_t>(r)];
    for (; c < rt.events.size() + rt.ops.size(); ++c) {
      const bool end_wait = c >= rt.events.size();
      const TraceEvent* e = end_wait ? nullptr : &rt.events[c];
      if (e != nullptr && e->kind == TraceEventKind::compute) continue;
      const int m = m_.base[static_cast<std::size_t>(r)] +
                    (end_wait ? static_cast<int>(c - rt.events.size()) : e->op);
      if (e != nullptr && e->kind == TraceEventKind::op) {
        issued_[static_cast<std::size_t>(m)] = 1;
        Counts& b = batches_[static_cast<std::size_t>(m_.batch_of[static_cast<std::size_t>(m)])];
        if (++b.issued == b.batch->members.size())
          startable_.push_back(m_.batch_of[static_cast<std::size_t>(m)]);
      } else if (!done_[static_cast<std::size_t>(m)]) {
        blocked_on_[static_cast<std::size_t>(r)] = m;
        return;
      }
    }
  }

  // Starts batch b if all its ops were issued and its stream's previous batch is done.
  void start(int b) {
    Counts& batch = batches_[static_cast<std::size_t>(b)];
    if (batch.started || batch.issued != batch.batch->members.size()) return;
    if (batch.batch->previous >= 0 &&
        batches_[static_cast<std::size_t>(batch.batch->previous)].done !=
            batches_[static_cast<std::size_t>(batch.batch->previous)].batch->members.size()) {
      return;
    }
    batch.started = true;
    for (int m : batch.batch->members) {
      arrived_[static_cast<std::size_t>(m)] = 1;
      const int i = m_.instance_of[static_cast<std::size_t>(m)];
      const std::vector<int>& slots = m_.slots[static_cast<std::size_t>(i)];
      if (++arrivals_[static_cast<std::size_t>(i)] < slots.size()) continue;
      for (int done : slots) finish(done);
    }
  }

  void finish(int m) {
    done_[static_cast<std::size_t>(m)] = 1;
    Counts& batch = batches_[static_cast<std::size_t>(m_.batch_of[static_cast<std::size_t>(m)])];
    if (++batch.done == batch.batch->members.size() && batch.batch->next >= 0)
      startable_.push_back(batch.batch->next);
    const int r = m_.rank_of[static_cast<std::size_t>(m)];
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
    if (c < rt.events.size())
      return "ranks[" + std::to_string(r) + "].events[" + std::to_string(c) + "] (wait for " +
             what + ")";
    return "the end of its events (waiting for " + what + ")";
  }

  // Why operation `instance` did not start: the first member that did not arrive, and why.
  std::string why_not_started(int instance, int depth) const {
    for (int m : m_.slots[static_cast<std::size_t>(instance)]) {
      if (arrived_[static_cast<std::size_t>(m)]) continue;
      const int q = m_.rank_of[static_cast<std::size_t>(m)];
      const std::string rank = "rank " + std::to_string(q);
      if (!issued_[static_cast<std::size_t>(m)]) {
        return rank + " never reaches " + label(m) + ": it is stuck at " + position_of(q);
      }
      const Counts& batch =
          batches_[static_cast<std::size_t>(m_.batch_of[static_cast<std::size_t>(m)])];
      for (int other : batch.batch->members) {
        if (!issued_[static_cast<std::size_t>(other)]) {
          return rank + " issued " + label(m) + " in a group with " + label(other) +
                 ", which it never issues: it is "
                 "stuck at " +
                 position_of(q);
        }
      }
      if (batch.batch->previous < 0) continue;
      const Counts& previous = batches_[static_cast<std::size_t>(batch.batch->previous)];
      for (int other : previous.batch->members) {
        if (done_[static_cast<std::size_t>(other)]) continue;
        std::string why = rank + " issued " + label(m) +
                          " but its stream on that communicator is still busy with " + label(other);
        if (depth < 2)
          why += ", which cannot start: " +
                 why_not_started(m_.instance_of[static_cast<std::size_t>(other)], depth + 1);
        return why;
      }
    }
    return "its ranks wait for each other";
  }

  std::string label(int m) const {
    const int r = m_.rank_of[static_cast<std::size_t>(m)];
    return op_label(t_,
                    t_.ranks[static_cast<std::size_t>(r)]
                        .ops[static_cast<std::size_t>(m - m_.base[static_cast<std::size_t>(r)])]);
  }

  struct Counts {
    const MatchedTrace::Batch* batch;
    std::size_t issued, done;
    bool started;
  };

  const Trace& t_;
  std::string_view source_;
  const MatchedTrace& m_;
  std::vector<Counts> batches_;
  std::vector<char> issued_, arrived_, done_;  // per member
  std::vector<std::size_t> arrivals_;          // per operation
  std::vector<std::size_t> cursor_;            // per rank: its events, then one end wait per op
  std::vector<int> blocked_on_;                // per rank: the member it waits for, -1
  std::vector<int> runnable_, startable_;
};

}  // namespace

void dry_run(const Trace& trace, std::string_view source, const MatchedTrace& matched) {
  DryRun(trace, source, matched).run();
}

}  // namespace twinccl::sim::detail
