// The step rules flow playback and trace replay share (sim/src/step_engine.h), driven by hand
// without SimGrid: buffered sends, receives ending a step, grouped send/recv, a unit's own flows,
// and when a unit is done.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "../../sim/src/step_engine.h"

using twinccl::sim::detail::FlowProgram;
using twinccl::sim::detail::FlowTransfer;
using twinccl::sim::detail::StepEngine;

namespace {

struct Run {
  FlowProgram program;
  std::vector<std::pair<int, int>> ends;
  std::vector<StepEngine::Steps> steps;
  std::vector<std::string> log;  // "post t", "launch t", "done u", in call order

  int add(int from, int to, int route, bool grouped = false) {
    FlowTransfer t;
    t.route = route;
    t.grouped = grouped;
    program.transfers.push_back(t);
    ends.emplace_back(from, to);
    return static_cast<int>(program.transfers.size()) - 1;
  }
  StepEngine engine() {
    std::vector<const StepEngine::Steps*> units;
    for (const auto& s : steps) units.push_back(&s);
    return StepEngine(program, units, ends,
                      {[this](int t) { log.push_back("post " + std::to_string(t)); },
                       [this](int t) { log.push_back("launch " + std::to_string(t)); },
                       [this](int u) { log.push_back("done " + std::to_string(u)); }});
  }
};

}  // namespace

TEST_CASE("step engine: sends are buffered, a receive ends the receiver's step") {
  Run run;
  const int a = run.add(0, 1, 0);  // unit 0 step 0 -> unit 1 step 0
  const int b = run.add(1, 0, 1);  // unit 1 step 1 -> unit 0 step 1
  run.steps = {{{a}, {b}}, {{a}, {b}}};
  StepEngine e = run.engine();
  e.enter(0);
  e.enter(1);
  CHECK(run.log == std::vector<std::string>{"post 0"});  // 0 posts a, does not wait for it
  CHECK(e.step_of(0) == 1);                              // 0 waits in step 1 for b
  CHECK(e.step_of(1) == 0);                              // 1 waits for a
  e.ready(a);
  e.ended(a);  // 1 leaves step 0, posts b; 0's send ended
  CHECK(run.log == std::vector<std::string>{"post 0", "launch 0", "post 1"});
  e.ready(b);
  e.ended(b);
  CHECK(e.step_of(0) == 2);
  CHECK(e.step_of(1) == 2);
  // b's end: its sender 1 (past its steps) is done first, then its receiver 0 leaves its step.
  CHECK(run.log[run.log.size() - 2] == "done 1");
  CHECK(run.log.back() == "done 0");
}

TEST_CASE("step engine: a grouped transfer waits for both ends, its sender for its end") {
  Run run;
  const int g = run.add(0, 1, 0, true);
  const int before = run.add(2, 1, 1);  // 1 must receive this first
  run.steps = {{{g}}, {{before}, {g}}, {{before}}};
  StepEngine e = run.engine();
  e.enter(0);
  CHECK(run.log.empty());  // 1 has not reached g's step: nothing moves, 0 waits
  CHECK(e.step_of(0) == 0);
  e.enter(1);
  e.enter(2);
  CHECK(run.log == std::vector<std::string>{"post 1"});  // 2 passed its steps, its send is open
  run.log.clear();
  e.ready(before);
  e.ended(before);
  CHECK(run.log == std::vector<std::string>{"launch 1", "done 2", "post 0"});
  e.ready(g);
  e.ended(g);
  CHECK(e.step_of(0) == 1);  // the sender left its step only when g ended
  CHECK(e.step_of(1) == 2);
}

TEST_CASE("step engine: a unit's own flows (NVLS) end no step, units out of range are refused") {
  Run run;
  const int own = run.add(0, 0, 0);
  const int in = run.add(1, 0, 1);
  run.steps = {{{own, in}}, {{in}}};
  StepEngine e = run.engine();
  e.enter(0);
  e.enter(1);
  e.ready(own);
  e.ended(own);
  CHECK(e.step_of(0) == 0);  // still waits for `in`
  e.ready(in);
  e.ended(in);
  CHECK(e.step_of(0) == 1);
  run.ends[1] = {1, 2};  // unit 2 does not exist
  CHECK_THROWS_WITH(run.engine(), Catch::Contains("to 2 of 2"));
}
