// Internal: the steps of flow playback (flow_simgrid.cc) and trace replay (replay_simgrid.cc),
// played by one controller actor each: which transfer may move when, and when a unit (a flow
// rank, a replay member) leaves its steps. The owner keeps the clock, the delay timers and the
// SimGrid comms; the engine calls it back.
//
//   StepEngine steps(program, unit_steps, ends,
//                    {.post_after_delay = [&](int t) { /* timer: ready(t) after t's delay */ },
//                     .launch = [&](int t) { /* start t's comm now */ },
//                     .unit_done = [&](int unit) { /* optional */ }});
//   for (int u = 0; u < units; ++u) steps.enter(u);   // each unit enters its step 0
//   steps.ready(t);   // t's delay passed: moves now, or waits behind its connection
//   steps.ended(t);   // t's comm ended
//
// How it works. A unit entering a step posts its sends (each starts after its delay, buffered as
// NCCL's sends are) and waits for the receives of the step that have not ended yet; with none
// left it goes on at once. A grouped transfer (flow_program.h) starts once its receiver reached
// its step too, and its sender leaves the step only when it ended. A unit's own flows (sender and
// receiver the same unit: NVLS's to and from the switch) end no step of its. A unit is done when
// it passed its last step and its sends ended. One connection per (route, sender, receiver)
// moves its transfers in step order, as NCCL's per-peer FIFOs do; the transfers of one step (its
// channels) move together. Each transfer's connection is numbered once up front, so posting and
// ending a transfer cost O(1) (plus the transfers it lets go). The callbacks come in a fixed
// order (the timelines depend on it): on an end, the connection's next step launches first, then
// the sender may be done, then the receiver and (grouped) the sender leave their steps.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include "flow_program.h"

namespace twinccl::sim::detail {

// The connections of one program: numbering and posting (above).
class StepConnections {
 public:
  // ends[t]: the (sending, receiving) unit of transfer t.
  StepConnections(const FlowProgram& program, const std::vector<std::pair<int, int>>& ends);

  // t is ready to move: true when it starts now (its connection is idle, or moves t's step and
  // nothing waits); false when it was queued behind its connection's earlier steps.
  bool post(int t);

  // t ended: when it was its connection's last active transfer, every waiting transfer of the
  // connection's next step starts, each handed to `launch` in the order they were posted.
  template <class Launch>
  void ended(int t, Launch&& launch) {
    Connection& c = connections_[connection_of_[static_cast<std::size_t>(t)]];
    if (--c.active != 0 || c.waiting.empty()) return;
    c.active_step = step_of(c.waiting.front());
    while (!c.waiting.empty() && step_of(c.waiting.front()) == c.active_step) {
      ++c.active;
      const int next = c.waiting.front();
      c.waiting.pop_front();
      launch(next);
    }
  }

  std::size_t size() const { return connections_.size(); }

 private:
  struct Connection {
    int active = 0;
    int active_step = -1;
    std::deque<int> waiting;
  };
  int step_of(int t) const { return p_.transfers[static_cast<std::size_t>(t)].step; }

  const FlowProgram& p_;
  std::vector<int> connection_of_;  // per transfer: its connection
  std::vector<Connection> connections_;
};

class StepEngine {
 public:
  using Steps = std::vector<std::vector<int>>;  // per step: the transfers it holds
  struct Hooks {
    std::function<void(int transfer)> post_after_delay;  // call ready(t) once t's delay passed
    std::function<void(int transfer)> launch;            // start t's comm now
    std::function<void(int unit)> unit_done;             // may be empty
  };

  // unit_steps[u]: unit u's steps; ends[t]: transfer t's (sending, receiving) unit. Both, and
  // `program`, must outlive the engine.
  StepEngine(const FlowProgram& program, std::vector<const Steps*> unit_steps,
             const std::vector<std::pair<int, int>>& ends, Hooks hooks);

  void enter(int unit) { enter_step(unit, 0); }
  void ready(int t) {
    if (connections_.post(t)) hooks_.launch(t);
  }
  void ended(int t);
  // The step unit u is in (its step count once it passed them all).
  std::size_t step_of(int unit) const { return step_[static_cast<std::size_t>(unit)]; }

 private:
  bool is_receive(int unit, int t) const {
    const auto& [from, to] = ends_[static_cast<std::size_t>(t)];
    return to == unit && from != unit;
  }
  void enter_step(int unit, std::size_t step);
  void release(int unit, std::size_t step_of_t);

  const FlowProgram& p_;
  std::vector<const Steps*> unit_steps_;
  const std::vector<std::pair<int, int>>& ends_;
  Hooks hooks_;
  StepConnections connections_;
  std::vector<std::size_t> step_, pending_;  // per unit: its step, the ends it waits for there
  std::vector<std::size_t> sends_open_;      // per unit: sends posted and not ended
  std::vector<char> steps_passed_;           // per unit
  std::vector<char> transfer_done_;
  std::vector<std::size_t> recv_step_;  // per transfer: the receiver's step holding it
  std::vector<std::size_t> send_step_;  // per transfer: the sender's step holding it
  std::vector<int> ends_in_step_;       // per grouped transfer: its ends that reached its step
};

}  // namespace twinccl::sim::detail
