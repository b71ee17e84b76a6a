// The SimGrid side of trace replay: one controller actor plays every rank's events, streams,
// operations and transfers on the flow platform (simgrid_run.h), all in one simulation.
//
// How it works. The controller keeps timers (compute ends, operations starting after their fixed
// latency, transfers starting after their software delay) and the active comms. Rank r runs its
// events until one takes time: compute sets a timer; issue marks a member issued and tries to
// start the batch it belongs to (all its members issued and the stream's previous batch done);
// wait blocks r until that member ended. A started batch makes its members arrive at their
// instance; when every member arrived, each enters step 0 after the instance's fixed latency.
// Members play their steps as flow's ranks do (step_engine.h: buffered sends after their delay,
// grouped send/recv, per-connection FIFOs). A member ends when it passed its last step and its
// sends ended; then its batch may be done (the stream's next batch may start) and its rank may be
// unblocked. Example, 2 ranks, one async all_reduce on 'dp' then compute 5 us then
// wait: both issue at 0, the all_reduce starts at 0 and runs while both compute; each rank blocks
// at its wait only if the all_reduce outlasts 5 us.
#include <algorithm>
#include <deque>
#include <queue>
#include <simgrid/s4u.hpp>

#include "replay_program.h"
#include "simgrid_run.h"
#include "step_comms.h"
#include "step_engine.h"
#include "twinccl/errors.h"

namespace sg4 = simgrid::s4u;

namespace twinccl::sim::detail {
namespace {

enum class TimerKind { compute_done, member_begin, transfer_start };

struct Timer {
  double at_s;
  TimerKind kind;
  int id;
  bool operator>(const Timer& o) const { return at_s > o.at_s; }
};

std::vector<const StepEngine::Steps*> member_steps(const ReplayProgram& program) {
  std::vector<const StepEngine::Steps*> steps;
  for (const ReplayMember& member : program.members) steps.push_back(&member.steps);
  return steps;
}

class ReplayController {
 public:
  ReplayController(const ReplayProgram& program, std::vector<sg4::Host*> hosts,
                   std::vector<double>& out)
      : p_(program),
        out_(out),
        steps_(program.flow, member_steps(program), program.transfer_members,
               {[this](int t) {
                  timers_.push({now() + p_.flow.transfers[static_cast<std::size_t>(t)].delay_s,
                                TimerKind::transfer_start, t});
                },
                [this](int t) { comms_.start(t); }, [this](int m) { member_done(m); }}),
        comms_(program.flow, std::move(hosts)) {}

  void operator()() {
    const std::size_t members = p_.members.size();
    out_.assign(p_.time_values(), 0.0);
    event_base_.assign(p_.rank_events.size(), 0);
    std::size_t base = 3 * members;
    for (std::size_t r = 0; r < p_.rank_events.size(); ++r) {
      event_base_[r] = base;
      base += 2 * p_.rank_events[r].size();
    }
    issued_.assign(members, 0);
    done_.assign(members, 0);
    batch_issued_.assign(p_.batches.size(), 0);
    batch_done_.assign(p_.batches.size(), 0);
    batch_started_.assign(p_.batches.size(), 0);
    arrived_.assign(p_.instances.size(), 0);
    cursor_.assign(p_.rank_events.size(), 0);
    blocked_on_.assign(p_.rank_events.size(), -1);
    for (std::size_t r = 0; r < p_.rank_events.size(); ++r)
      runnable_.push_back(static_cast<int>(r));
    loop();
  }

 private:
  double now() const { return sg4::Engine::get_clock(); }
  double& member_time(int m, int which) {
    return out_[3 * static_cast<std::size_t>(m) + static_cast<std::size_t>(which)];
  }
  double& event_time(int rank, std::size_t e, int which) {
    return out_[event_base_[static_cast<std::size_t>(rank)] + 2 * e +
                static_cast<std::size_t>(which)];
  }

  // Runs rank r's events until one takes time or blocks.
  void run_rank(int r) {
    const auto& events = p_.rank_events[static_cast<std::size_t>(r)];
    std::size_t& c = cursor_[static_cast<std::size_t>(r)];
    while (c < events.size()) {
      const ReplayEvent& e = events[c];
      event_time(r, c, 0) = now();
      if (e.kind == ReplayEventKind::compute) {
        if (e.seconds > 0.0) {
          timers_.push({now() + e.seconds, TimerKind::compute_done, r});
          return;
        }
      } else if (e.kind == ReplayEventKind::issue) {
        issue(e.member);
      } else if (!done_[static_cast<std::size_t>(e.member)]) {
        blocked_on_[static_cast<std::size_t>(r)] = e.member;
        return;
      }
      event_time(r, c, 1) = now();
      ++c;
    }
  }

  void resume_rank(int r) {  // the event at the cursor (compute or wait) ended now
    event_time(r, cursor_[static_cast<std::size_t>(r)], 1) = now();
    ++cursor_[static_cast<std::size_t>(r)];
    runnable_.push_back(r);
  }

  void issue(int m) {
    issued_[static_cast<std::size_t>(m)] = 1;
    const int b = p_.members[static_cast<std::size_t>(m)].batch;
    ++batch_issued_[static_cast<std::size_t>(b)];
    try_start_batch(b);
  }

  void try_start_batch(int b) {
    const ReplayBatch& batch = p_.batches[static_cast<std::size_t>(b)];
    if (batch_started_[static_cast<std::size_t>(b)]) return;
    if (batch_issued_[static_cast<std::size_t>(b)] != batch.members.size()) return;
    if (batch.previous >= 0 && !batch_done_[static_cast<std::size_t>(batch.previous)]) return;
    batch_started_[static_cast<std::size_t>(b)] = 1;
    for (int m : batch.members) arrive(m);
  }

  void arrive(int m) {
    member_time(m, 0) = now();
    const int i = p_.members[static_cast<std::size_t>(m)].instance;
    const ReplayInstance& inst = p_.instances[static_cast<std::size_t>(i)];
    if (++arrived_[static_cast<std::size_t>(i)] < inst.members.size()) return;
    for (int mm : inst.members) {
      member_time(mm, 1) = now();
      timers_.push({now() + inst.fixed_latency_s, TimerKind::member_begin, mm});
    }
  }

  void member_done(int m) {
    if (done_[static_cast<std::size_t>(m)]) return;
    done_[static_cast<std::size_t>(m)] = 1;
    member_time(m, 2) = now();
    const ReplayMember& member = p_.members[static_cast<std::size_t>(m)];
    const int b = member.batch;
    const ReplayBatch& batch = p_.batches[static_cast<std::size_t>(b)];
    const bool all_done = std::all_of(batch.members.begin(), batch.members.end(), [&](int x) {
      return done_[static_cast<std::size_t>(x)] != 0;
    });
    if (all_done) {
      batch_done_[static_cast<std::size_t>(b)] = 1;
      if (batch.next >= 0) try_start_batch(batch.next);
    }
    if (blocked_on_[static_cast<std::size_t>(member.rank)] == m) {
      blocked_on_[static_cast<std::size_t>(member.rank)] = -1;
      resume_rank(member.rank);
    }
  }

  void fire(const Timer& timer) {
    switch (timer.kind) {
      case TimerKind::compute_done:
        resume_rank(timer.id);
        break;
      case TimerKind::member_begin:
        steps_.enter(timer.id);
        break;
      case TimerKind::transfer_start:
        steps_.ready(timer.id);
        break;
    }
  }

  void drain_runnable() {
    while (!runnable_.empty()) {
      const int r = runnable_.front();
      runnable_.pop_front();
      run_rank(r);
    }
  }

  void loop() {
    for (;;) {
      drain_runnable();
      while (!timers_.empty() && timers_.top().at_s <= now()) {
        const Timer t = timers_.top();
        timers_.pop();
        fire(t);
        drain_runnable();
      }
      if (comms_.empty()) {
        if (timers_.empty()) break;
        sg4::this_actor::sleep_until(timers_.top().at_s);
        continue;
      }
      const double timeout = timers_.empty() ? -1.0 : std::max(0.0, timers_.top().at_s - now());
      if (!comms_.wait(timeout)) continue;
      for (int t : comms_.ended()) steps_.ended(t);
    }
    // check_trace's dry run refuses traces that deadlock; should one get here all the same, say so
    // once the engine has stopped (an exception thrown in an actor aborts SimGrid with a
    // backtrace).
    for (std::size_t r = 0; r < p_.rank_events.size() && stuck_.empty(); ++r) {
      if (cursor_[r] != p_.rank_events[r].size()) {
        stuck_ = "trace replay deadlock: rank " + std::to_string(r) +
                 " is stuck at its replay event " + std::to_string(cursor_[r]) + " of " +
                 std::to_string(p_.rank_events[r].size()) +
                 " (an operation never started: its ranks wait for each other in different orders)";
      }
    }
  }

 public:
  std::string stuck_;  // empty, or why the replay did not end

 private:
  const ReplayProgram& p_;
  std::vector<double>& out_;
  std::vector<std::size_t> event_base_;
  std::vector<char> issued_, done_;
  std::vector<std::size_t> batch_issued_;
  std::vector<char> batch_done_, batch_started_;
  std::vector<std::size_t> arrived_;
  std::vector<std::size_t> cursor_;
  std::vector<int> blocked_on_;
  std::deque<int> runnable_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  StepEngine steps_;  // after timers_ (its hooks push there)
  StepComms comms_;
};

}  // namespace

std::vector<double> play_replay_with_simgrid(const ReplayProgram& program) {
  std::vector<double> out;
  std::string stuck;
  run_simgrid(program.flow, [&](const std::vector<sg4::Host*>& hosts) {
    sg4::Actor::create("replay", hosts.front(), [&program, hosts, &out, &stuck] {
      ReplayController controller(program, hosts, out);
      controller();
      stuck = controller.stuck_;
    });
  });
  if (!stuck.empty()) throw DeadlockError(stuck);
  return out;
}

}  // namespace twinccl::sim::detail
