// run()'s RunOptions::p2p_per_peer_streams and max_p2p_lane_threads reach the emulator
// (TWINCCL_P2P_STREAMS, TWINCCL_MAX_P2P_LANE_THREADS): the irecv-first ring runs with per-peer
// streams and is a DeadlockError without; a lane bound too small for the irecvs in flight is a
// ConfigError naming the setting.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "twinccl/errors.h"
#include "twinccl/run.h"

using Catch::Matchers::Contains;
using namespace twinccl;

namespace {

// Every rank posts its irecv from the left before its isend to the right.
void irecv_first_ring(Communicator& world) {
  const int n = world.size(), r = world.rank();
  std::vector<float> out(4, static_cast<float>(r)), in(4, -1.0f);
  Work received =
      world.recv(in.data(), in.size(), DataType::float32, (r + n - 1) % n, {.async_op = true});
  Work sent =
      world.send(out.data(), out.size(), DataType::float32, (r + 1) % n, {.async_op = true});
  received.wait();
  sent.wait();
  if (in[0] != static_cast<float>((r + n - 1) % n)) throw InternalError("wrong data");
}

RunOptions emulator(int world_size) {
  RunOptions o;
  o.world_size = world_size;
  o.timeout_s = 10;
  return o;
}

}  // namespace

TEST_CASE("RunOptions::p2p_per_peer_streams reaches the emulator", "[run][p2p]") {
  RunOptions o = emulator(4);
  CHECK_THROWS_AS(run(o, irecv_first_ring), DeadlockError);  // NCCL's one stream per comm
  o.p2p_per_peer_streams = true;
  CHECK_NOTHROW(run(o, irecv_first_ring));
}

TEST_CASE("RunOptions::max_p2p_lane_threads bounds the lane threads", "[run][p2p]") {
  RunOptions o = emulator(4);
  o.p2p_per_peer_streams = true;
  o.max_p2p_lane_threads = 2;  // 4 ranks with an irecv and an isend in flight need up to 8
  CHECK_THROWS_WITH(run(o, irecv_first_ring),
                    Contains("max_p2p_lane_threads = 2: TWINCCL_MAX_P2P_LANE_THREADS"));
  o.max_p2p_lane_threads = 0;
  CHECK_THROWS_AS(run(o, irecv_first_ring), ConfigError);
  CHECK_THROWS_WITH(run(o, irecv_first_ring),
                    Contains("max_p2p_lane_threads=0 must be in [1, 1048576]"));
}
