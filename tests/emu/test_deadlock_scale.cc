// Deadlocks at the emulator's largest world: found within seconds (one whole-graph search per
// 10 ms, not a search per waiter per poll), reported with a message of bounded length that still
// names the first waits of the cycle and its first ranks. bench/bench_emu_deadlock_scale measures
// other shapes and sizes.
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "twinccl/emu/emulator.h"
#include "twinccl/errors.h"

using namespace twinccl;
using Catch::Matchers::Contains;

namespace {

struct Outcome {
  bool deadlock = false;
  std::string message;
};

// Runs fn on every rank of a world of n ranks and keeps what each rank's function threw.
std::vector<Outcome> run_world_of(int n, const std::function<void(Communicator&)>& fn,
                                  double* seconds) {
  emu::EmulatorOptions o;
  o.world_size = n;
  o.timeout_s = 120;  // far above the detection time: a timeout here is a failure
  std::vector<Outcome> out(static_cast<std::size_t>(n));
  auto start = std::chrono::steady_clock::now();
  try {
    emu::run_world(o, [&](Communicator& c) {
      try {
        fn(c);
      } catch (const DeadlockError& e) {
        out[static_cast<std::size_t>(c.rank())] = {true, e.what()};
      } catch (const Error& e) {
        out[static_cast<std::size_t>(c.rank())] = {false, e.what()};
      }
    });
  } catch (const Error&) {  // Works never waited on etc.: the outcomes say what matters
  }
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace

// A send-first ring of n ranks (NCCL's one stream per communicator): every rank's message names
// the cycle's first waits, its length and its last wait, in under 4 KB.
static void check_send_first_ring(int n) {
  double seconds = 0;
  auto out = run_world_of(
      n,
      [](Communicator& c) {
        const int size = c.size(), r = c.rank();
        int x = r, y = -1;
        c.send(&x, 1, DataType::int32, (r + 1) % size);  // every rank waits for its next to recv
        c.recv(&y, 1, DataType::int32, (r + size - 1) % size);
      },
      &seconds);
  INFO("the run took " << seconds << " s (4096 ranks before the fix: 14 s, a 480 KB message)");
  CHECK(seconds < 30);  // a hang guard for a loaded machine; measured 0.6-3 s at 4096 ranks
  const std::string ranks = "the cycle's " + std::to_string(n) + " ranks";
  const std::string last = "rank " + std::to_string(n - 1) + " waits in send to rank 0";
  int deadlocks = 0;
  for (std::size_t r = 0; r < out.size(); ++r) {
    INFO("rank " << r << ": " << out[r].message);
    REQUIRE_THAT(out[r].message, Contains("deadlock: rank 0 waits in send to rank 1"));
    CHECK(out[r].message.size() < 4096);
    CHECK_THAT(out[r].message, Contains("more wait(s)") && Contains(ranks) &&
                                   Contains("0 -> 1 -> 2 -> 3") && Contains(last));
    deadlocks += out[r].deadlock ? 1 : 0;
  }
  CHECK(deadlocks > 0);  // the others may get AbortedError carrying the same cycle
}

TEST_CASE("deadlock at scale: a send-first ring of kMaxEmulatedRanks ranks (NCCL's one stream)",
          "[emu][deadlock][scale]") {
  check_send_first_ring(kMaxEmulatedRanks);
}

// The same description on a world small enough for the sanitizer builds (scripts/sanitizers.sh
// leaves out the tests "at scale").
TEST_CASE("deadlock: a send-first ring of 64 ranks is described by its first waits",
          "[emu][deadlock]") {
  check_send_first_ring(64);
}

TEST_CASE("deadlock at scale: a collective that one rank of kMaxEmulatedRanks never calls",
          "[emu][deadlock][scale]") {
  double seconds = 0;
  auto out = run_world_of(
      kMaxEmulatedRanks,
      [](Communicator& c) {
        const int n = c.size(), r = c.rank();
        int x = r;
        if (r == n - 1)
          c.recv(&x, 1, DataType::int32, 0);  // instead of the all_reduce: waits for rank 0
        else
          c.all_reduce(&x, &x, 1, DataType::int32, ReduceOp::sum());
      },
      &seconds);
  INFO("the run took " << seconds << " s");
  CHECK(seconds < 30);
  for (std::size_t r = 0; r < out.size(); ++r) {
    INFO("rank " << r << ": " << out[r].message);
    CHECK_THAT(out[r].message, Contains("deadlock:") && Contains("waits in all_reduce #0") &&
                                   Contains("rank 4095 waits in recv from rank 0"));
    CHECK(out[r].message.size() < 4096);
  }
}
