// Recording traces of emulated programs (TracingCommunicator + TraceRecorder) and replaying them.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include "support/harness.h"
#include "twinccl/emu/trace.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::testing;

namespace {

// A data-parallel x tensor-parallel step: tp = 8 consecutive ranks, dp = same position across
// groups. Forward all_gather on tp, compute, backward reduce_scatter on tp, async all_reduce of
// gradients on dp overlapping the next compute.
void dp_tp_step(Communicator& world, emu::TraceRecorder& recorder, int tp_size) {
  emu::TracingCommunicator comm(world, recorder);
  auto tp = comm.split(comm.rank() / tp_size, comm.rank(), "tp");
  auto dp = comm.split(comm.rank() % tp_size, comm.rank(), "dp");
  const std::size_t shard = 1 << 18;
  Buffer local = tp->alloc(shard, DataType::bfloat16);
  Buffer full = tp->alloc(shard * static_cast<std::size_t>(tp->size()), DataType::bfloat16);
  tp->all_gather(local, full);
  comm.compute(200e-6);
  tp->reduce_scatter(full, local, ReduceOp::sum());
  Buffer grads = dp->alloc(1 << 22, DataType::bfloat16);
  Work w = dp->all_reduce(grads, grads, ReduceOp::sum(), {.async_op = true});
  comm.compute_flops(1e11);
  w.wait();
}

}  // namespace

TEST_CASE("trace recording: ops, waits, compute, splits, groups and p2p sequence numbers") {
  const int n = GENERATE(1, 2, 3, 4, 7);
  emu::TraceRecorder recorder(n, {.program = "unit", .measured_compute_scale = 0.0});
  run_ranks(n, [&](Communicator& world) {
    emu::TracingCommunicator c(world, recorder);
    Buffer x = c.alloc(5, DataType::float32);
    c.all_reduce(x, x);
    Buffer y = c.alloc(5 * static_cast<std::size_t>(n), DataType::float32);
    Work w = c.all_gather(x, y, {.async_op = true});
    c.compute(1e-3);
    w.wait();
    w.wait();  // a second wait records nothing more
    auto half = c.split(c.rank() % 2, c.rank(), "half");
    half->all_reduce(x, x);
    Buffer from_left = c.alloc(x.count(), x.dtype());
    {
      Group g(c);
      c.send(x, (c.rank() + 1) % n);
      c.recv(from_left, (c.rank() + n - 1) % n);  // not x: the send still reads it
    }
  });
  const sim::Trace t = recorder.trace();
  REQUIRE(t.world_size() == n);
  CHECK(t.program == "unit");
  REQUIRE(t.communicators.size() == (n == 1 ? 2u : 3u));
  CHECK(t.communicators[0] == sim::TraceCommunicator{"world", [&] {
          std::vector<int> v;
          for (int r = 0; r < n; ++r) v.push_back(r);
          return v;
        }()});
  for (int r = 0; r < n; ++r) {
    const sim::RankTrace& rt = t.ranks[static_cast<std::size_t>(r)];
    REQUIRE(rt.ops.size() == 5);
    CHECK(rt.ops[0].kind == OpKind::all_reduce);
    CHECK(rt.ops[0].seq == 0);
    CHECK(rt.ops[1].seq == 1);
    CHECK(rt.ops[1].async);
    const sim::TraceCommunicator& half = t.communicators[static_cast<std::size_t>(rt.ops[2].comm)];
    CHECK(half.name == "half");
    for (int member : half.ranks) CHECK(member % 2 == r % 2);
    CHECK(rt.ops[3].kind == OpKind::send);
    CHECK(rt.ops[3].group > 0);
    CHECK(rt.ops[3].group == rt.ops[4].group);
    using K = sim::TraceEventKind;
    std::vector<K> kinds;
    for (const sim::TraceEvent& e : rt.events) kinds.push_back(e.kind);
    CHECK(kinds == std::vector<K>{K::op, K::wait, K::op, K::compute, K::wait, K::op, K::wait, K::op, K::op,
                                  K::wait, K::wait});
  }
  sim::check_trace(t);
  const sim::ReplayResult res = sim::replay(t, topo::dgx_h100());
  CHECK(res.ops.size() == 2 + (n == 1 ? 1u : 2u) + static_cast<std::size_t>(n));  // + n send/recv pairs
  CHECK(res.ranks[0].compute_us == Approx(1000.0));
}

TEST_CASE("trace recording: measured compute is wall time between calls times the scale") {
  emu::TraceRecorder recorder(2, {.program = "", .measured_compute_scale = 0.5});
  run_ranks(2, [&](Communicator& world) {
    emu::TracingCommunicator c(world, recorder);
    c.barrier();
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    c.barrier();
    c.compute(1e-3);  // declared: the gap before the next call is not measured
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    c.barrier();
  });
  const sim::Trace t = recorder.trace();
  for (const sim::RankTrace& rt : t.ranks) {
    double measured = 0.0, declared = 0.0;
    int computes = 0;
    for (const sim::TraceEvent& e : rt.events) {
      if (e.kind != sim::TraceEventKind::compute) continue;
      ++computes;
      (e.seconds == 1e-3 ? declared : measured) += e.seconds;
    }
    CHECK(declared == 1e-3);
    CHECK(measured >= 0.019);  // 40 ms x 0.5
    CHECK(measured < 0.5);
    CHECK(computes <= 4);
  }
}

TEST_CASE("trace recording: bad ranks and negative compute are refused") {
  emu::TraceRecorder recorder(2);
  REQUIRE_THROWS_AS(recorder.record_compute(2, 1.0), InvalidArgument);
  REQUIRE_THROWS_WITH(recorder.record_compute(0, -1.0), Catch::Contains("seconds must be >= 0"));
  emu::TracedCall call;
  call.comm_name = "x";
  call.comm_ranks = {1};
  REQUIRE_THROWS_WITH(recorder.record_op(0, call), Catch::Contains("not in comm 'x'"));
  REQUIRE_THROWS_AS(recorder.record_wait(1, 0), InvalidArgument);
  REQUIRE_THROWS_AS(emu::TraceRecorder(0), InvalidArgument);
}

TEST_CASE("trace recording: a 16-rank dp x tp step replays faster on NVLink than on a slow torus") {
  emu::TraceRecorder recorder(16, {.program = "dp x tp step", .measured_compute_scale = 0.0});
  run_ranks(16, [&](Communicator& world) { dp_tp_step(world, recorder, 8); });
  const sim::Trace t = sim::trace_from_json(sim::to_json(recorder.trace()));
  const sim::ReplayResult nvlink = sim::replay(t, topo::h100_cluster(2));
  const sim::ReplayResult torus = sim::replay(t, topo::torus_2d(4, 4, 25.0));
  CHECK(nvlink.ops.size() == 2 + 2 + 8);  // splits' own all_gathers are not recorded
  CHECK(nvlink.total_us > 200.0);
  CHECK(nvlink.total_us < torus.total_us);
  CHECK(nvlink.overlap_fraction() > 0.0);
}
