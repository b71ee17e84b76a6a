// Structural check of a schedule: slices inside their buffers, sends and recvs paired (FIFO per
// ordered pair, equal counts), no hazard inside one step, and no deadlock when every send waits
// until its receiver takes it (the emulator's pull model, stricter than buffered sends).
#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "twinccl/algorithms.h"
#include "twinccl/errors.h"

namespace twinccl {
namespace {

struct OpRef {
  int rank;
  std::size_t step, op;
};

std::string buffer_name(BufferKind b) {
  switch (b) {
    case BufferKind::input:
      return "input";
    case BufferKind::output:
      return "output";
    case BufferKind::scratch:
      return "scratch";
  }
  return "?";
}

std::string slice_text(const Slice& s) {
  return buffer_name(s.buffer) + "[" + std::to_string(s.offset) + ", " +
         std::to_string(s.offset + s.count) + ")";
}

class Checker {
 public:
  explicit Checker(const Schedule& s) : s_(s), n_(s.spec.nranks) {}

  [[noreturn]] void fail(const OpRef& at, const std::string& what) const {
    throw InternalError("schedule '" + s_.algorithm + "' for " + std::string(name(s_.spec.kind)) +
                        " (" + std::to_string(n_) + " ranks, count " +
                        std::to_string(s_.spec.count) + "): rank " + std::to_string(at.rank) +
                        " step " + std::to_string(at.step) + " op " + std::to_string(at.op) + ": " +
                        what);
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw InternalError("schedule '" + s_.algorithm + "' for " + std::string(name(s_.spec.kind)) +
                        " (" + std::to_string(n_) + " ranks): " + what);
  }

  const StepOp& op(const OpRef& r) const {
    return s_.ranks[static_cast<std::size_t>(r.rank)].steps[r.step].ops[r.op];
  }

  void check_slices() const {
    for (int r = 0; r < n_; ++r) {
      const RankSchedule& rs = s_.ranks[static_cast<std::size_t>(r)];
      const std::size_t size[3] = {input_elements(s_.spec, r), output_elements(s_.spec, r),
                                   rs.scratch_count};
      for (std::size_t k = 0; k < rs.steps.size(); ++k) {
        for (std::size_t i = 0; i < rs.steps[k].ops.size(); ++i) {
          const OpRef at{r, k, i};
          const StepOp& o = rs.steps[k].ops[i];
          const bool comm = o.kind == StepOpKind::send || o.kind == StepOpKind::recv ||
                            o.kind == StepOpKind::recv_reduce;
          if (comm && (o.peer < 0 || o.peer >= n_ || o.peer == r)) {
            fail(at, "peer " + std::to_string(o.peer) + " is not another rank of [0, " +
                         std::to_string(n_) + ")");
          }
          if (o.kind != StepOpKind::send && o.dst.buffer == BufferKind::input) {
            fail(at, "writes the input buffer, which is read-only");
          }
          std::vector<Slice> used;
          for_each_slice(o, [&](const Slice& sl, bool) { used.push_back(sl); });
          for (const Slice& sl : used) {
            const std::size_t limit = size[static_cast<std::size_t>(sl.buffer)];
            if (sl.offset > limit || sl.count > limit - sl.offset) {
              fail(at, "slice " + slice_text(sl) + " outside the " + buffer_name(sl.buffer) +
                           " of " + std::to_string(limit) + " elements");
            }
            if (sl.count != used.front().count) {
              fail(at, "slices of one operation differ in size: " + slice_text(used.front()) +
                           " and " + slice_text(sl));
            }
          }
        }
      }
    }
  }

  // Calls f(slice, writes) for every slice the op uses.
  template <typename F>
  static void for_each_slice(const StepOp& o, F f) {
    switch (o.kind) {
      case StepOpKind::send:
        f(o.src, false);
        break;
      case StepOpKind::recv:
        f(o.dst, true);
        break;
      case StepOpKind::recv_reduce:
      case StepOpKind::copy:
        f(o.src, false);
        f(o.dst, true);
        break;
      case StepOpKind::reduce:
        f(o.src, false);
        f(o.src2, false);
        f(o.dst, true);
        break;
    }
  }

  // Within one step, an op that writes elements another op reads or writes is a hazard (the
  // emulator runs a step's ops concurrently, senders' data is read in place). Checked twice for
  // collectives with an in-place form: once with input and output apart, once with them aliased
  // by NCCL's in-place rule. Inside one op, a source may be its destination exactly, not partly.
  void check_hazards() const {
    check_hazards_in(false);
    const OpKind k = s_.spec.kind;
    if (k == OpKind::all_reduce || k == OpKind::broadcast || k == OpKind::reduce ||
        k == OpKind::reduce_scatter || k == OpKind::all_gather) {
      check_hazards_in(true);
    }
  }

  void check_hazards_in(bool in_place) const {
    struct Use {
      int space;
      std::size_t begin, end, op;
      bool writes;
    };
    for (int r = 0; r < n_; ++r) {
      // Where input and output start in one shared address space when in place.
      const std::size_t block = static_cast<std::size_t>(r) * s_.spec.count;
      const std::size_t input_base = s_.spec.kind == OpKind::all_gather ? block : 0;
      const std::size_t output_base = s_.spec.kind == OpKind::reduce_scatter ? block : 0;
      const auto place = [&](const Slice& sl, std::size_t op, bool writes) {
        if (!in_place || sl.buffer == BufferKind::scratch) {
          return Use{static_cast<int>(sl.buffer), sl.offset, sl.offset + sl.count, op, writes};
        }
        const std::size_t base = sl.buffer == BufferKind::input ? input_base : output_base;
        return Use{-1, base + sl.offset, base + sl.offset + sl.count, op, writes};
      };
      const RankSchedule& rs = s_.ranks[static_cast<std::size_t>(r)];
      for (std::size_t k = 0; k < rs.steps.size(); ++k) {
        std::vector<Use> uses;
        for (std::size_t i = 0; i < rs.steps[k].ops.size(); ++i) {
          const StepOp& o = rs.steps[k].ops[i];
          if (o.kind == StepOpKind::copy) {  // a copy onto itself is a no-op (in place)
            const Use from = place(o.src, i, false);
            const Use to = place(o.dst, i, true);
            if (from.space == to.space && from.begin == to.begin && from.end == to.end) continue;
          }
          for_each_slice(o, [&](const Slice& sl, bool w) {
            if (sl.count > 0) uses.push_back(place(sl, i, w));
          });
        }
        std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) {
          return std::tie(a.space, a.begin) < std::tie(b.space, b.begin);
        });
        for (std::size_t a = 0; a < uses.size(); ++a) {
          for (std::size_t b = a + 1;
               b < uses.size() && uses[b].space == uses[a].space && uses[b].begin < uses[a].end;
               ++b) {
            const Use& x = uses[a];
            const Use& y = uses[b];
            if (!x.writes && !y.writes) continue;
            const bool exact = x.begin == y.begin && x.end == y.end;
            if (x.op == y.op && exact) continue;
            const Use& w = x.writes ? x : y;
            const Use& o = x.writes ? y : x;
            fail({r, k, w.op},
                 std::string("writes elements [") + std::to_string(w.begin) + ", " +
                     std::to_string(w.end) + ") that " +
                     (w.op == o.op ? std::string("it also reads partly")
                                   : "op " + std::to_string(o.op) + " of the same step also uses") +
                     " ([" + std::to_string(o.begin) + ", " + std::to_string(o.end) + ")" +
                     (in_place ? ", input and output aliased in place)" : ")"));
          }
        }
      }
    }
  }

  // Pairs the k-th send A->B with the k-th recv on B from A; fills partner_.
  void pair_messages() {
    std::map<std::pair<int, int>, std::deque<OpRef>> sends, recvs;
    for (int r = 0; r < n_; ++r) {
      const RankSchedule& rs = s_.ranks[static_cast<std::size_t>(r)];
      for (std::size_t k = 0; k < rs.steps.size(); ++k) {
        for (std::size_t i = 0; i < rs.steps[k].ops.size(); ++i) {
          const StepOp& o = rs.steps[k].ops[i];
          if (o.kind == StepOpKind::send) sends[{r, o.peer}].push_back({r, k, i});
          if (o.kind == StepOpKind::recv || o.kind == StepOpKind::recv_reduce) {
            recvs[{o.peer, r}].push_back({r, k, i});
          }
        }
      }
    }
    for (auto& [pair, list] : sends) {
      auto& matching = recvs[pair];
      if (matching.size() != list.size()) {
        fail(list.front(), "rank " + std::to_string(pair.first) + " sends " +
                               std::to_string(list.size()) + " messages to rank " +
                               std::to_string(pair.second) + ", which receives " +
                               std::to_string(matching.size()) + " from it");
      }
      for (std::size_t m = 0; m < list.size(); ++m) {
        const OpRef& snd = list[m];
        const OpRef& rcv = matching[m];
        if (op(snd).src.count != op(rcv).dst.count) {
          fail(snd, "message " + std::to_string(m) + " to rank " + std::to_string(rcv.rank) +
                        " carries " + std::to_string(op(snd).src.count) + " elements but rank " +
                        std::to_string(rcv.rank) + " step " + std::to_string(rcv.step) + " op " +
                        std::to_string(rcv.op) + " receives " + std::to_string(op(rcv).dst.count));
        }
        partner_[key(snd)] = rcv;
        partner_[key(rcv)] = snd;
      }
    }
    for (auto& [pair, list] : recvs) {
      if (!list.empty() && sends.find(pair) == sends.end()) {
        fail(list.front(), "receives " + std::to_string(list.size()) + " messages from rank " +
                               std::to_string(pair.first) + ", which sends none to it");
      }
    }
  }

  // Every send waits until its receiver takes it; a step ends when all its messages moved.
  void check_progress() {
    const auto nr = static_cast<std::size_t>(n_);
    std::vector<std::size_t> step(nr, 0), pending(nr, 0);
    std::vector<bool> queued(nr, false);
    std::deque<int> ready;
    std::map<std::tuple<int, std::size_t, std::size_t>, bool> done;
    const auto steps_of = [&](int r) { return s_.ranks[static_cast<std::size_t>(r)].steps.size(); };
    const auto is_comm = [](const StepOp& o) {
      return o.kind != StepOpKind::copy && o.kind != StepOpKind::reduce;
    };
    const auto count = [&](int r) {  // messages of r's current step
      const auto ri = static_cast<std::size_t>(r);
      pending[ri] = 0;
      queued[ri] = false;
      if (step[ri] >= steps_of(r)) return;
      for (const StepOp& o : s_.ranks[ri].steps[step[ri]].ops) pending[ri] += is_comm(o) ? 1 : 0;
    };
    const auto make_ready = [&](std::size_t ri) {
      if (pending[ri] == 0 && !queued[ri]) {
        queued[ri] = true;
        ready.push_back(static_cast<int>(ri));
      }
    };
    const auto match = [&](int r) {  // pair r's current messages with partners already there
      const auto ri = static_cast<std::size_t>(r);
      if (step[ri] < steps_of(r)) {
        const Step& st = s_.ranks[ri].steps[step[ri]];
        for (std::size_t i = 0; i < st.ops.size(); ++i) {
          if (!is_comm(st.ops[i]) || done[key({r, step[ri], i})]) continue;
          const OpRef other = partner_.at(key({r, step[ri], i}));
          const auto oi = static_cast<std::size_t>(other.rank);
          if (step[oi] != other.step) continue;
          done[key(other)] = true;
          done[key({r, step[ri], i})] = true;
          --pending[ri];
          --pending[oi];
          make_ready(oi);
        }
      }
      make_ready(ri);
    };
    for (int r = 0; r < n_; ++r) count(r);
    for (int r = 0; r < n_; ++r) match(r);
    while (!ready.empty()) {
      const int r = ready.front();
      ready.pop_front();
      const auto ri = static_cast<std::size_t>(r);
      if (step[ri] >= steps_of(r)) continue;
      ++step[ri];
      count(r);
      match(r);
    }
    std::string stuck;
    for (int r = 0; r < n_; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      if (step[ri] >= steps_of(r)) continue;
      if (!stuck.empty()) stuck += "; ";
      stuck += "rank " + std::to_string(r) + " at step " + std::to_string(step[ri]);
      const Step& st = s_.ranks[ri].steps[step[ri]];
      for (std::size_t i = 0; i < st.ops.size(); ++i) {
        if (is_comm(st.ops[i]) && !done[key({r, step[ri], i})]) {
          stuck += " (op " + std::to_string(i) +
                   (st.ops[i].kind == StepOpKind::send ? " sends to rank " : " waits for rank ") +
                   std::to_string(st.ops[i].peer) + ")";
          break;
        }
      }
    }
    if (!stuck.empty()) fail("deadlock: " + stuck);
  }

 private:
  static std::tuple<int, std::size_t, std::size_t> key(const OpRef& r) {
    return {r.rank, r.step, r.op};
  }

  const Schedule& s_;
  int n_;
  std::map<std::tuple<int, std::size_t, std::size_t>, OpRef> partner_;
};

}  // namespace

void check_schedule(const Schedule& schedule) {
  Checker checker(schedule);
  if (schedule.ranks.size() != static_cast<std::size_t>(std::max(schedule.spec.nranks, 0))) {
    checker.fail(std::to_string(schedule.ranks.size()) + " rank schedules for " +
                 std::to_string(schedule.spec.nranks) + " ranks");
  }
  checker.check_slices();
  checker.check_hazards();
  checker.pair_messages();
  checker.check_progress();
}

}  // namespace twinccl
