// A slow GPU in a replay (ReplayOptions::rank_compute_slowdown, set by a what-if --degrade of a
// GPU): its compute takes longer, the others wait for it at the next collective; bad factors are
// refused.
#include <catch2/catch.hpp>

#include "replay_traces.h"
#include "sim_topologies.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay.h"

using namespace twinccl;
using namespace twinccl::sim;
using namespace twinccl::sim::testing;

TEST_CASE("replay: a slow GPU's compute delays the step by its slowdown") {
  const topo::Topology t = star(4, 100.0, 0.5);
  TraceBuilder b(4);
  const int world = b.comm("world", {0, 1, 2, 3});
  for (int r = 0; r < 4; ++r) b.compute(r, 0.001);  // 1 ms each
  b.blocking_all(world, OpKind::all_reduce, 1024);
  const ReplayResult nominal = replay(b.trace(), t);
  ReplayOptions slow;
  slow.rank_compute_slowdown = {1.0, 2.0};  // rank 1 at half speed; ranks 2, 3 unlisted: 1
  const ReplayResult slowed = replay(b.trace(), t, slow);
  CHECK(slowed.ranks[1].compute_us == Approx(2 * nominal.ranks[1].compute_us));
  CHECK(slowed.ranks[0].compute_us == Approx(nominal.ranks[0].compute_us));
  CHECK(slowed.total_us == Approx(nominal.total_us + 1000.0).margin(1.0));
  // Everyone else now waits for rank 1 at the all_reduce.
  CHECK(slowed.ranks[0].exposed_comm_us > nominal.ranks[0].exposed_comm_us + 900.0);
  for (double bad : {0.5, 0.0, -1.0, 1e7}) {
    ReplayOptions o;
    o.rank_compute_slowdown = {bad};
    CHECK_THROWS_AS(replay(b.trace(), t, o), InvalidArgument);
  }
}
