// A trace recorded on the NCCL backend (through the recording test double) holds its groups and
// split communicators, as one recorded on the emulator does (call_observer.h).
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <catch2/catch.hpp>
#include <string>

#include "nccl/launch.h"
#include "nccl_double/control.h"
#include "twinccl/trace/recorder.h"

using namespace twinccl;

TEST_CASE("nccl: a recorded trace has the backend's groups and splits", "[nccl_mapping]") {
  nccl_double::use();
  RunOptions o;
  o.backend = "nccl";
  o.timeout_s = 30;
  trace::TraceRecorder recorder(2);
  nccl::run_local_ranks({0, 1}, o, [&](Communicator& w) {
    recorder.record(w);
    auto child = w.split(0, w.rank(), "child");
    REQUIRE(child);
    Buffer x = w.alloc(4, DataType::float32);
    w.group_start();
    w.all_reduce(x, x, ReduceOp::sum(), {.async_op = true});
    w.all_reduce(x, x, ReduceOp::max(), {.async_op = true});
    w.group_end();
    Buffer y = child->alloc(4, DataType::float32);
    child->all_reduce(y, y, ReduceOp::sum());
  });
  const trace::Trace t = recorder.trace();
  REQUIRE(t.communicators.size() == 2);  // the world and the split's child
  CHECK(t.communicators[1].name == "child");
  CHECK(t.communicators[1].ranks == std::vector<int>{0, 1});
  for (const trace::RankTrace& rank : t.ranks) {
    REQUIRE(rank.ops.size() == 3);
    CHECK(rank.ops[0].group > 0);  // the group's two calls share its id
    CHECK(rank.ops[1].group == rank.ops[0].group);
    CHECK(rank.ops[2].group == 0);
    CHECK(rank.ops[2].comm == 1);  // on the child
  }
  CHECK(nccl_double::violations().empty());
}

#endif
