// Trace replay: agreement with flow playback, contention between communicators, dependencies,
// async overlap, bulk rings, outputs.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "replay_traces.h"
#include "sim_topologies.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay.h"

using namespace twinccl;
using namespace twinccl::sim;
using namespace twinccl::sim::testing;

namespace {

Request ring_all_reduce(int n, std::size_t count) {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.nranks = n;
  r.spec.count = count;
  r.algorithm = "ring";
  r.fidelity = Fidelity::flow;
  return r;
}

}  // namespace

// Flow and the replay price a call in one place (transfer_pricing.h) and play steps by the same
// rules (buffered sends, per-connection FIFOs), so a one-call trace takes what flow says.
TEST_CASE("replay: one collective on every rank takes what flow playback says") {
  const int n = GENERATE(1, 2, 3, 4, 7, 8);
  const std::size_t count =
      GENERATE(std::size_t{0}, std::size_t{1}, std::size_t{1001}, std::size_t{1} << 20);
  const topo::Topology t = star(8, 100.0, 0.5);
  TraceBuilder b(n);
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) all[static_cast<std::size_t>(r)] = r;
  b.blocking_all(b.comm("world", all), OpKind::all_reduce, count);
  // Forced ring (the tuner would pick per size): the replay plays what flow plays for it.
  ReplayOptions ring;
  ring.algorithm = "ring";
  const ReplayResult res = replay(b.trace(), t, ring);
  const double flow_us = simulate_flow(t, ring_all_reduce(n, count)).prediction.time_us;
  REQUIRE(res.ops.size() == 1);
  // The same flows, priced once (transfer_pricing.h); 1e-6 leaves room for SimGrid's solver.
  CHECK(res.ops[0].time_us() == Approx(flow_us).epsilon(1e-6).margin(1e-4));
  CHECK(res.total_us == Approx(flow_us).epsilon(1e-6).margin(1e-4));
  for (const ReplayRank& r : res.ranks) CHECK(r.exposed_comm_us == Approx(r.comm_us).margin(1e-9));
}

TEST_CASE(
    "replay: two all_reduces of different communicators sharing a link slow each other down") {
  const topo::Topology t = two_islands(4, 50.0);
  const std::size_t count = std::size_t{1} << 22;  // 16 MiB: bandwidth bound
  TraceBuilder alone(4);
  const int a = alone.comm("a", {0, 2});
  alone.comm("b", {1, 3});
  alone.blocking_all(a, OpKind::all_reduce, count);
  TraceBuilder both(4);
  const int a2 = both.comm("a", {0, 2});
  const int b2 = both.comm("b", {1, 3});
  both.blocking_all(a2, OpKind::all_reduce, count);
  both.blocking_all(b2, OpKind::all_reduce, count);
  const ReplayResult one = replay(alone.trace(), t);
  const ReplayResult two = replay(both.trace(), t);
  REQUIRE(two.ops.size() == 2);
  // Both cross the 50 GB/s middle link at once: each gets about half of it.
  for (const ReplayOp& op : two.ops) CHECK(op.time_us() > 1.8 * one.ops[0].time_us());
  CHECK(two.total_us > 1.8 * one.total_us);
  CHECK(two.links.front().name.find("s0") != std::string::npos);
  CHECK(two.links.front().utilisation > 0.9);
}

TEST_CASE(
    "replay: an operation starts when its last rank reached it, and after the rank's previous "
    "one") {
  const topo::Topology t = star(4, 100.0, 0.5);
  TraceBuilder b(4);
  const int w = b.comm("world", {0, 1, 2, 3});
  b.blocking_all(w, OpKind::all_reduce, 1 << 16);
  b.compute(3, 200e-6);  // rank 3 arrives late at the second one
  b.blocking_all(w, OpKind::all_reduce, 1 << 16);
  const ReplayResult res = replay(b.trace(), t);
  REQUIRE(res.ops.size() == 2);
  CHECK(res.ops[1].start_us >= res.ops[0].end_us + 200.0 - 1e-9);
  CHECK(res.ops[1].start_us == Approx(res.ops[0].end_us + 200.0));
  // Ranks 0-2 waited for rank 3 in the second all_reduce: exposed, not overlapped.
  CHECK(res.ranks[0].exposed_comm_us > res.ranks[3].exposed_comm_us + 199.0);
}

TEST_CASE("replay: async ops of one communicator run in stream order, op k+1 after op k") {
  const topo::Topology t = star(4, 100.0, 0.5);
  TraceBuilder b(4);
  const int w = b.comm("world", {0, 1, 2, 3});
  for (int r = 0; r < 4; ++r) {
    const int x = b.issue(r, w, OpKind::all_gather, 1 << 14);
    const int y = b.issue(r, w, OpKind::all_gather, 1 << 14);
    b.wait(r, y);
    b.wait(r, x);
  }
  const ReplayResult res = replay(b.trace(), t);
  REQUIRE(res.ops.size() == 2);
  CHECK(res.ops[1].start_us >= res.ops[0].end_us - 1e-9);
}

TEST_CASE("replay: async communication overlaps compute and shortens the step") {
  const topo::Topology t = star(8, 100.0, 0.5);
  const double compute_s = 300e-6;
  const std::size_t count = std::size_t{1} << 22;
  TraceBuilder sync_b(8), async_b(8);
  const int ws = sync_b.comm("world", {0, 1, 2, 3, 4, 5, 6, 7});
  const int wa = async_b.comm("world", {0, 1, 2, 3, 4, 5, 6, 7});
  for (int r = 0; r < 8; ++r) {
    sync_b.blocking(r, ws, OpKind::all_reduce, count);
    sync_b.compute(r, compute_s);
    const int op = async_b.issue(r, wa, OpKind::all_reduce, count);
    async_b.compute(r, compute_s);
    async_b.wait(r, op);
  }
  const ReplayResult s = replay(sync_b.trace(), t);
  const ReplayResult a = replay(async_b.trace(), t);
  const double comm_us = s.ops[0].time_us();
  CHECK(s.total_us == Approx(comm_us + 300.0));
  CHECK(a.total_us == Approx(std::max(comm_us, 300.0)));
  CHECK(a.total_us < s.total_us);
  CHECK(s.overlap_fraction() == Approx(0.0).margin(1e-9));
  CHECK(a.overlap_fraction() > 0.2);
  CHECK(a.ranks[0].overlapped_us == Approx(std::min(comm_us, 300.0)));
}

TEST_CASE("replay: send/recv pairs in a group do not deadlock and declared flops take time") {
  const topo::Topology t = star(2, 100.0, 0.5, -1, 0.0, topo::GpuArch::hopper);
  TraceBuilder b(2);
  const int w = b.comm("world", {0, 1});
  b.compute(0, 0.0, 989e12 * 1e-3);  // 1 ms at H100's 989 TFLOP/s
  Trace tr = b.trace();
  for (int r = 0; r < 2; ++r) {
    RankTrace& rt = tr.ranks[static_cast<std::size_t>(r)];
    for (OpKind k : {OpKind::send, OpKind::recv}) {
      TraceOp op;
      op.comm = w;
      op.kind = k;
      op.count = 1000;
      op.peer = 1 - r;
      op.group = 1;
      rt.ops.push_back(op);
      rt.events.push_back({TraceEventKind::op, static_cast<int>(rt.ops.size()) - 1, 0.0, 0.0});
    }
    rt.events.push_back({TraceEventKind::wait, 0, 0.0, 0.0});
    rt.events.push_back({TraceEventKind::wait, 1, 0.0, 0.0});
  }
  const ReplayResult res = replay(tr, t);
  CHECK(res.ops.size() == 2);
  CHECK(res.ranks[0].compute_us == Approx(1000.0));
  CHECK(res.ops[0].start_us == Approx(1000.0));
}

TEST_CASE("replay: a bulk ring matches the step-by-step ring without contention") {
  const topo::Topology t = star(8, 100.0, 0.5);
  TraceBuilder b(8);
  b.blocking_all(b.comm("world", {0, 1, 2, 3, 4, 5, 6, 7}), OpKind::all_reduce, 8 << 16);
  ReplayOptions bulk;
  bulk.bulk_ring_above_ranks = 4;
  const ReplayResult exact = replay(b.trace(), t);
  const ReplayResult fast = replay(b.trace(), t, bulk);
  CHECK_FALSE(exact.ops[0].bulk);
  CHECK(fast.ops[0].bulk);
  CHECK(fast.total_us == Approx(exact.total_us).epsilon(0.01));
}

TEST_CASE("replay: inconsistent traces are refused with the op and ranks named") {
  const topo::Topology t = star(4, 100.0, 0.5);
  TraceBuilder b(4);
  const int w = b.comm("dp", {0, 1, 2, 3});
  for (int r = 0; r < 3; ++r) b.blocking(r, w, OpKind::all_reduce, 10);  // rank 3 missing
  REQUIRE_THROWS_WITH(replay(b.trace(), t),
                      Catch::Contains("all_reduce #0 on comm 'dp'") && Catch::Contains("rank 3"));
  TraceBuilder c(4);
  const int w2 = c.comm("dp", {0, 1, 2, 3});
  for (int r = 0; r < 4; ++r) c.blocking(r, w2, OpKind::all_reduce, r == 2 ? 11 : 10);
  REQUIRE_THROWS_WITH(replay(c.trace(), t),
                      Catch::Contains("disagree") && Catch::Contains("count=11"));
  TraceBuilder d(8);
  REQUIRE_THROWS_AS(replay(d.trace(), t), InvalidArgument);  // 8 ranks, 4 GPUs
}

TEST_CASE("replay: summary and Perfetto timeline") {
  const topo::Topology t = star(4, 100.0, 0.5);
  TraceBuilder b(4);
  const int w = b.comm("world", {0, 1, 2, 3});
  for (int r = 0; r < 4; ++r) {
    const int op = b.issue(r, w, OpKind::reduce_scatter, 1 << 12);
    b.compute(r, 10e-6);
    b.wait(r, op);
  }
  const ReplayResult res = replay(b.trace(), t);
  const std::string text = summarize_replay(res);
  CHECK(text.find("simulated on 'star-4'") != std::string::npos);
  CHECK(text.find("reduce_scatter") != std::string::npos);
  CHECK(text.find("busiest links") != std::string::npos);
  std::ostringstream out;
  write_replay_perfetto(res, out);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  int compute = 0, comm = 0;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    CHECK(e["ts"].get<double>() + e["dur"].get<double>() <= res.total_us + 1e-6);
    if (e["cat"] == "compute") ++compute;
    if (e["cat"] == "comm world") ++comm;
  }
  CHECK(compute == 4);
  CHECK(comm == 4);
  CHECK(doc["otherData"]["total_us"].get<double>() == Approx(res.total_us));
}
