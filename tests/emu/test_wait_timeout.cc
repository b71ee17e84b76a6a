// set_wait_timeout (emulator.h): a rank's own bound on its waits in one communicator, instead of
// the run's timeout_s: shorter (a TimeoutError naming what set it, long before the run's), longer
// (a late peer is waited for past the run's), per rank and per communicator, for collectives, the
// schedule path's internal traffic and send/recv; nonsense values are InvalidArgument.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/harness.h"
#include "twinccl/emu/emulator.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

void late(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// The run's options: its timeout_s, and the schedule path forced or not.
CheckOptions run_timeout(double timeout_s, bool schedule_path = false) {
  CheckOptions o;
  o.timeout_s = timeout_s;
  o.schedule_path = schedule_path;
  return o;
}

void all_reduce_one(Communicator& c) {
  float x = 1;
  c.all_reduce(&x, &x, 1, DataType::float32, ReduceOp::sum());
}

}  // namespace

TEST_CASE("a rank's own wait timeout ends its wait before the run's", "[wait_timeout]") {
  auto path = GENERATE(false, true);  // fast path, and the schedule path's own exchange
  auto out = run_ranks_capture(
      3,
      [](Communicator& c) {
        if (c.rank() == 2) {
          late(1000);
        } else {
          set_wait_timeout(c, 0.2, "the process group's timeout=0:00:00.200000");
        }
        all_reduce_one(c);
      },
      run_timeout(30, path));
  for (int r : {0, 1}) {
    const RankOutcome& o = out[static_cast<std::size_t>(r)];
    INFO("rank " << r << ": " << o.type << ": " << o.message);
    CHECK((o.type == "TimeoutError" || o.type == "AbortedError"));
    CHECK(o.seconds < 0.9);  // not the run's 30 s, nor the late rank's 1 s
  }
  const std::string& first = out[0].type == "TimeoutError" ? out[0].message : out[1].message;
  CHECK_THAT(first, Contains("waited for rank(s) 2 to arrive for 0.2") &&
                        Contains("s (the process group's timeout=0:00:00.200000)"));
}

TEST_CASE("a rank's own wait timeout longer than the run's waits for a late peer",
          "[wait_timeout]") {
  std::vector<float> got(2, 0);
  HarnessOptions options;
  options.timeout_s = 0.3;
  run_ranks(
      2,
      [&](Communicator& c) {
        set_wait_timeout(c, 20, "new_group(timeout=0:00:20)");
        if (c.rank() == 1) late(900);  // three times the run's timeout_s
        float x = static_cast<float>(c.rank() + 1);
        c.all_reduce(&x, &x, 1, DataType::float32, ReduceOp::sum());
        got[static_cast<std::size_t>(c.rank())] = x;
      },
      options);
  CHECK(got == std::vector<float>{3, 3});
}

TEST_CASE("a wait timeout bounds send/recv and only its own rank and communicator",
          "[wait_timeout]") {
  SECTION("recv") {
    auto out = run_ranks_capture(
        2,
        [](Communicator& c) {
          float x = 0;
          if (c.rank() == 0) {
            set_wait_timeout(c, 0.2, "dist.set_timeout(0:00:00.200000)");
            c.recv(&x, 1, DataType::float32, 1);
          } else {
            late(1000);
            c.send(&x, 1, DataType::float32, 0);
          }
        },
        run_timeout(30));
    INFO(out[0].message);
    CHECK(out[0].type == "TimeoutError");
    CHECK_THAT(out[0].message, Contains("waited for a send from rank 1 for 0.2") &&
                                   Contains("(dist.set_timeout(0:00:00.200000))"));
    CHECK(out[0].seconds < 1.4);
  }
  SECTION("another communicator keeps the run's timeout") {
    auto out = run_ranks_capture(
        2,
        [](Communicator& c) {
          std::unique_ptr<Communicator> pair = c.split(0, c.rank(), "pair");
          set_wait_timeout(*pair, 0.1, "new_group(timeout=0:00:00.100000)");
          if (c.rank() == 1) late(500);
          all_reduce_one(c);  // the world: 30 s
        },
        run_timeout(30));
    CHECK(out[0].type.empty());
    CHECK(out[1].type.empty());
  }
  SECTION("a rank without its own timeout waits the run's") {
    auto out = run_ranks_capture(
        2,
        [](Communicator& c) {
          if (c.rank() == 0) set_wait_timeout(c, 0.1, "set by rank 0");
          if (c.rank() == 0) late(500);  // rank 1 waits: its own bound is the run's
          all_reduce_one(c);
        },
        run_timeout(30));
    CHECK(out[0].type.empty());
    CHECK(out[1].type.empty());
  }
}

TEST_CASE("set_wait_timeout refuses nonsense", "[wait_timeout]") {
  auto out = run_ranks_capture(1, [](Communicator& c) {
    for (double bad : {0.0, -1.0, std::nan("")}) {
      CHECK_THROWS_AS(set_wait_timeout(c, bad, "init_process_group(timeout=...)"), InvalidArgument);
    }
    CHECK_THROWS_WITH(set_wait_timeout(c, -2, "init_process_group(timeout=-1 day)"),
                      Contains("comm 'world', rank 0: the timeout (init_process_group(timeout=-1 "
                               "day)) is -2.000000 s; it must be > 0"));
    set_wait_timeout(c, 1e30, "forever");  // capped at kMaxTimeoutSeconds: no overflow
    all_reduce_one(c);
  });
  CHECK(out[0].type.empty());
}
