// Internal: the connections of trace replay (replay_simgrid.cc). One connection per (route,
// sending member, receiving member): its transfers move in step order, as NCCL's per-peer FIFOs
// do; the transfers of one step (its channels) move together.
//
//   ReplayConnections connections(program);
//   if (connections.post(t)) launch(t);          // else t waits behind earlier steps
//   connections.ended(t, [&](int next) { launch(next); });
//
// Each transfer's connection is numbered once up front, so posting and ending a transfer cost
// O(1) (plus the transfers it lets go), not a map look-up per transfer.
#pragma once

#include <deque>
#include <vector>

#include "replay_program.h"

namespace twinccl::sim::detail {

class ReplayConnections {
 public:
  explicit ReplayConnections(const ReplayProgram& program);

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
  int step_of(int t) const { return p_.flow.transfers[static_cast<std::size_t>(t)].step; }

  const ReplayProgram& p_;
  std::vector<int> connection_of_;  // per transfer: its connection
  std::vector<Connection> connections_;
};

}  // namespace twinccl::sim::detail
