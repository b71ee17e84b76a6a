// Traces recorded from emulated programs (trace::TraceRecorder, tests/emu/test_trace.cc), checked
// and replayed by the simulator.
#include <catch2/catch.hpp>

#include "support/harness.h"
#include "twinccl/sim/replay.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/trace/recorder.h"
#include "twinccl/trace/trace_file.h"

using namespace twinccl;
using namespace twinccl::testing;

namespace {

// A data-parallel x tensor-parallel step: tp = 8 consecutive ranks, dp = same position across
// groups. Forward all_gather on tp, compute, backward reduce_scatter on tp, async all_reduce of
// gradients on dp overlapping the next compute.
void dp_tp_step(Communicator& comm, trace::TraceRecorder& recorder, int tp_size) {
  recorder.record(comm);
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

TEST_CASE("recorded trace: ops, waits, compute, splits and groups replay as recorded") {
  const int n = GENERATE(1, 2, 3, 4, 7);
  trace::TraceRecorder recorder(n, {.program = "unit", .measured_compute_scale = 0.0});
  run_ranks(n, [&](Communicator& c) {
    recorder.record(c);
    Buffer x = c.alloc(5, DataType::float32);
    c.all_reduce(x, x);
    Buffer y = c.alloc(5 * static_cast<std::size_t>(n), DataType::float32);
    Work w = c.all_gather(x, y, {.async_op = true});
    c.compute(1e-3);
    w.wait();
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
  sim::check_trace(t);
  const sim::ReplayResult res = sim::replay(t, topo::dgx_h100());
  CHECK(res.ops.size() ==
        2 + (n == 1 ? 1u : 2u) + static_cast<std::size_t>(n));  // + n send/recv pairs
  CHECK(res.ranks[0].compute_us == Approx(1000.0));
}

TEST_CASE("recorded trace: a 16-rank dp x tp step replays faster on NVLink than on a slow torus") {
  trace::TraceRecorder recorder(16, {.program = "dp x tp step", .measured_compute_scale = 0.0});
  run_ranks(16, [&](Communicator& world) { dp_tp_step(world, recorder, 8); });
  const sim::Trace t = sim::trace_from_json(trace::to_json(recorder.trace()));
  const sim::ReplayResult nvlink = sim::replay(t, topo::h100_cluster(2));
  const sim::ReplayResult torus = sim::replay(t, topo::torus_2d(4, 4, 25.0));
  CHECK(nvlink.ops.size() == 2 + 2 + 8);  // splits add no operation of their own
  CHECK(nvlink.total_us > 200.0);
  CHECK(nvlink.total_us < torus.total_us);
  CHECK(nvlink.overlap_fraction() > 0.0);
}
