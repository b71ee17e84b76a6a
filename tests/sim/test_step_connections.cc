// The connections of flow playback and trace replay (sim/src/step_engine.h): one FIFO per (route,
// sending unit, receiving unit), moving its transfers step by step; the channels of one step move
// together; other connections are never held up. The timelines depends on exactly this order.
#include <catch2/catch.hpp>
#include <vector>

#include "../../sim/src/replay_program.h"
#include "../../sim/src/step_engine.h"

using twinccl::sim::detail::ReplayProgram;
using twinccl::sim::detail::StepConnections;

namespace {

// Adds a transfer on `route` from member `from` to member `to` in the sender's `step`.
int add(ReplayProgram& p, int route, int from, int to, int step) {
  twinccl::sim::detail::FlowTransfer t;
  t.route = route;
  t.step = step;
  p.flow.transfers.push_back(t);
  p.transfer_members.emplace_back(from, to);
  return static_cast<int>(p.flow.transfers.size()) - 1;
}

}  // namespace

TEST_CASE("step connections: one per route and member pair, steps in order, channels together") {
  ReplayProgram p;
  const int a0 = add(p, 0, 0, 1, 0);   // connection A: route 0, member 0 -> 1
  const int a0b = add(p, 0, 0, 1, 0);  // A, same step (a second channel)
  const int a1 = add(p, 0, 0, 1, 1);   // A, next step
  const int a1b = add(p, 0, 0, 1, 1);  // A, next step, second channel
  const int a2 = add(p, 0, 0, 1, 2);   // A, step after
  const int b0 = add(p, 0, 2, 3, 1);   // B: same route, other members
  const int c0 = add(p, 1, 0, 1, 1);   // C: same members, other route
  StepConnections connections(p.flow, p.transfer_members);
  CHECK(connections.size() == 3);

  std::vector<int> launched;
  const auto launch = [&](int t) { launched.push_back(t); };
  CHECK(connections.post(a0));
  CHECK(connections.post(a0b));       // the step that moves: goes at once
  CHECK_FALSE(connections.post(a1));  // waits for step 0 to end
  CHECK_FALSE(connections.post(a1b));
  CHECK_FALSE(connections.post(a2));
  CHECK(connections.post(b0));  // other connections are idle
  CHECK(connections.post(c0));

  connections.ended(a0, launch);
  CHECK(launched.empty());  // a0b still moves
  connections.ended(b0, launch);
  connections.ended(c0, launch);
  CHECK(launched.empty());
  connections.ended(a0b, launch);
  CHECK(launched == std::vector<int>{a1, a1b});  // the whole next step, in posting order
  connections.ended(a1b, launch);
  CHECK(launched.size() == 2);
  connections.ended(a1, launch);
  CHECK(launched == std::vector<int>{a1, a1b, a2});
  connections.ended(a2, launch);
  // An idle connection takes a later post at once; one behind a moving step queues.
  const int a3 = add(p, 0, 0, 1, 3);
  StepConnections again(p.flow, p.transfer_members);
  CHECK(again.post(a3));
  CHECK_FALSE(again.post(a0));
}
