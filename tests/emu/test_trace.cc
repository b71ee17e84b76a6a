// Recording traces of emulated programs: TraceRecorder as an observer of each rank's
// communicator (ops, waits, groups, splits, compute), each call checked once, no hidden
// collectives. Replaying recorded traces: test_trace_replay.cc.
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "support/harness.h"
#include "twinccl/call_observer.h"
#include "twinccl/errors.h"
#include "twinccl/trace/recorder.h"

using namespace twinccl;
using namespace twinccl::testing;

TEST_CASE("trace recording: ops, waits, compute, splits, groups and p2p sequence numbers") {
  const int n = GENERATE(1, 2, 3, 4, 7);
  trace::TraceRecorder recorder(n, {.program = "unit", .measured_compute_scale = 0.0});
  run_ranks(n, [&](Communicator& world) {
    recorder.record(world);
    Communicator& c = world;
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
  const trace::Trace t = recorder.trace();
  REQUIRE(t.world_size() == n);
  CHECK(t.program == "unit");
  REQUIRE(t.communicators.size() == (n == 1 ? 2u : 3u));
  CHECK(t.communicators[0] == trace::TraceCommunicator{"world", [&] {
                                                         std::vector<int> v;
                                                         for (int r = 0; r < n; ++r) v.push_back(r);
                                                         return v;
                                                       }()});
  for (int r = 0; r < n; ++r) {
    const trace::RankTrace& rt = t.ranks[static_cast<std::size_t>(r)];
    REQUIRE(rt.ops.size() == 5);
    CHECK(rt.ops[0].kind == OpKind::all_reduce);
    CHECK(rt.ops[0].seq == 0);
    CHECK(rt.ops[1].seq == 1);
    CHECK(rt.ops[1].async);
    const trace::TraceCommunicator& half =
        t.communicators[static_cast<std::size_t>(rt.ops[2].comm)];
    CHECK(half.name == "half");
    for (int member : half.ranks) CHECK(member % 2 == r % 2);
    CHECK(rt.ops[3].kind == OpKind::send);
    CHECK(rt.ops[3].group > 0);
    CHECK(rt.ops[3].group == rt.ops[4].group);
    using K = trace::TraceEventKind;
    std::vector<K> kinds;
    for (const trace::TraceEvent& e : rt.events) kinds.push_back(e.kind);
    CHECK(kinds == std::vector<K>{K::op, K::wait, K::op, K::compute, K::wait, K::op, K::wait, K::op,
                                  K::op, K::wait, K::wait});
  }
}

TEST_CASE("trace recording: measured compute is wall time between calls times the scale") {
  trace::TraceRecorder recorder(2, {.program = "", .measured_compute_scale = 0.5});
  run_ranks(2, [&](Communicator& world) {
    recorder.record(world);
    Communicator& c = world;
    c.barrier();
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    c.barrier();
    c.compute(1e-3);  // declared: the gap before the next call is not measured
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    c.barrier();
  });
  const trace::Trace t = recorder.trace();
  for (const trace::RankTrace& rt : t.ranks) {
    double measured = 0.0, declared = 0.0;
    int computes = 0;
    for (const trace::TraceEvent& e : rt.events) {
      if (e.kind != trace::TraceEventKind::compute) continue;
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
  trace::TraceRecorder recorder(2);
  REQUIRE_THROWS_AS(recorder.record_compute(2, 1.0), InvalidArgument);
  REQUIRE_THROWS_WITH(recorder.record_compute(0, -1.0), Catch::Contains("seconds must be >= 0"));
  REQUIRE_THROWS_WITH(recorder.record_op(0, {"x", {1}}, trace::TraceOp{}),
                      Catch::Contains("not in comm 'x'"));
  REQUIRE_THROWS_AS(recorder.record_wait(1, 0), InvalidArgument);
  REQUIRE_THROWS_AS(trace::TraceRecorder(0), InvalidArgument);
}

TEST_CASE("trace recording: a call is checked once and a rejected call is not recorded") {
  // Counts the calls the observer is shown and the checks a rank fails (rejected()).
  struct Counting final : CallObserver {
    std::atomic<int>& calls;
    explicit Counting(std::atomic<int>& c) : calls(c) {}
    Work call(Communicator&, const OpDesc&, const Proceed& proceed) override {
      ++calls;
      return proceed();
    }
  };
  std::atomic<int> calls{0};
  trace::TraceRecorder recorder(2);
  // Each rank keeps what its refused broadcast said; the test thread asserts (Catch is not
  // thread-safe, so no assertion runs on a rank thread).
  std::vector<std::string> refusals(2);
  run_ranks(2, [&](Communicator& world) {
    recorder.record(world);
    Buffer x = world.alloc(4, DataType::float32);
    world.all_reduce(x, x);
    try {
      world.broadcast(x, 5);
    } catch (const InvalidArgument& e) {
      refusals[static_cast<std::size_t>(world.rank())] = e.what();
    }
    auto counted = world.split(0, world.rank(), "counted");
    counted->observe(std::make_shared<Counting>(calls));
    counted->all_reduce(x, x);
    counted->all_reduce(x, x);
  });
  for (const std::string& refusal : refusals) CHECK_THAT(refusal, Catch::Contains("root=5"));
  CHECK(calls == 4);  // 2 ranks x 2 calls: each issue() shows the observer its call once
  const trace::Trace t = recorder.trace();
  for (const trace::RankTrace& rt : t.ranks) {
    REQUIRE(rt.ops.size() ==
            1);  // the refused broadcast is not there; `counted` is observed by Counting
    CHECK(rt.ops[0].kind == OpKind::all_reduce);
  }
}

TEST_CASE(
    "trace recording: split adds no collective of its own, the members come from colors and keys") {
  const int n = 6;
  trace::TraceRecorder recorder(n);
  std::vector<std::string> flight(static_cast<std::size_t>(n));
  run_ranks(n, [&](Communicator& world) {
    recorder.record(world);
    // Reversed keys: the child's rank order is by key, so world rank 4 is rank 0 of color 0.
    auto part = world.split(world.rank() % 2, n - world.rank(), "part");
    Buffer x = part->alloc(3, DataType::int32);
    part->all_reduce(x, x);
    if (world.rank() == 0) flight[0] = flight_recorder_json(world);
  });
  const trace::Trace t = recorder.trace();
  REQUIRE(t.communicators.size() == 2);
  std::vector<trace::TraceCommunicator> parts(t.communicators.begin(), t.communicators.end());
  std::sort(parts.begin(), parts.end(),
            [](const auto& a, const auto& b) { return a.ranks < b.ranks; });
  CHECK(parts[0] == trace::TraceCommunicator{"part", {4, 2, 0}});
  CHECK(parts[1] == trace::TraceCommunicator{"part", {5, 3, 1}});
  for (const trace::RankTrace& rt : t.ranks) {
    REQUIRE(rt.ops.size() == 1);
    CHECK(rt.ops[0].seq == 0);
  }
  // The emulator saw split and the all_reduce, nothing else (no all_gather to learn the members).
  CHECK(flight[0].find("all_gather") == std::string::npos);
  CHECK(flight[0].find("all_reduce") != std::string::npos);
}
