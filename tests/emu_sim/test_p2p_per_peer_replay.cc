// Traces of runs whose send/recv ran per (peer, direction) (EmulatorOptions::p2p_per_peer_streams,
// torch's p2p): the trace says so ("p2p_streams": "per_peer") and the replay orders send/recv the
// same way, so an irecv-first ring that ran replays instead of being a replay deadlock.
#include <catch2/catch.hpp>

#include "support/harness.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/trace/recorder.h"
#include "twinccl/trace/trace_file.h"

using namespace twinccl;
using namespace twinccl::testing;

namespace {

// Every rank: irecv from the left, isend to the right, a group (send right, all_reduce, recv
// left), wait.
sim::Trace record_irecv_first_ring(int n) {
  trace::TraceRecorderOptions ro;
  ro.program = "irecv-first ring";
  ro.p2p_per_peer_streams = true;
  trace::TraceRecorder recorder(n, ro);
  CheckOptions o;
  o.p2p_per_peer_streams = true;
  auto out = run_ranks_capture(
      n,
      [&](Communicator& c) {
        recorder.record(c);
        const int left = (c.rank() + n - 1) % n, right = (c.rank() + 1) % n;
        Buffer in = c.alloc(1 << 14, DataType::float32),
               out_buf = c.alloc(1 << 14, DataType::float32);
        Work r = c.recv(in, left, {.async_op = true});
        Work s = c.send(out_buf, right, {.async_op = true});
        r.wait();
        s.wait();
        Buffer x = c.alloc(8, DataType::float32);
        c.group_start();
        c.recv(in, left);
        c.all_reduce(x, x, ReduceOp::sum());
        c.send(out_buf, right);
        c.group_end();
      },
      o);
  for (const auto& outcome : out) REQUIRE(outcome.type.empty());
  return recorder.trace();
}

}  // namespace

TEST_CASE("p2p per peer: the trace records it and the replay orders send/recv per peer") {
  const int n = GENERATE(2, 3, 8);
  sim::Trace t = record_irecv_first_ring(n);
  CHECK(t.p2p_per_peer_streams);
  const std::string text = trace::to_json(t);
  CHECK(text.find("\"p2p_streams\":\"per_peer\"") != std::string::npos);
  const sim::Trace back = sim::trace_from_json(text);  // parsed and checked (dry run included)
  CHECK(back == t);
  const sim::ReplayResult res = sim::replay(back, topo::dgx_h100());
  CHECK(res.ops.size() == 2 * static_cast<std::size_t>(n) + 1);  // 2n send/recv pairs + all_reduce
  CHECK(res.total_us > 0.0);

  // The same ops ordered per communicator (NCCL's stream) cannot replay: each rank's recv holds
  // its send back.
  t.p2p_per_peer_streams = false;
  CHECK_THROWS_AS(sim::check_trace(t), DeadlockError);
}

TEST_CASE("p2p per peer: a trace's p2p_streams must be per_comm or per_peer") {
  sim::Trace t = record_irecv_first_ring(2);
  std::string text = trace::to_json(t);
  const std::string field = "\"p2p_streams\":\"per_peer\"";
  text.replace(text.find(field), field.size(), "\"p2p_streams\":\"sideways\"");
  CHECK_THROWS_WITH(trace::from_json(text, "t.json"),
                    Catch::Contains("p2p_streams") && Catch::Contains("sideways"));
  t.p2p_per_peer_streams = false;
  CHECK(trace::to_json(t).find("p2p_streams") == std::string::npos);  // old files unchanged
}
