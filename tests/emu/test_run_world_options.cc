// emu::run_world refuses options it cannot honour before any rank starts, with a ConfigError
// naming the option and the value: a timeout that is not a finite positive number of seconds
// (converting NaN, infinity or 1e300 to milliseconds was undefined behaviour), and a forced
// algorithm no collective has (it silently applied nowhere).
#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <vector>

#include "twinccl/emu/emulator.h"
#include "twinccl/errors.h"

using namespace twinccl;
using Catch::Matchers::Contains;

TEST_CASE("run_world: timeout_s must be above 0 and at most kMaxTimeoutSeconds", "[options]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double bad : {0.0, -1.0, nan, inf, -inf, 1e300, kMaxTimeoutSeconds * 2}) {
    INFO("timeout_s=" << bad);
    emu::EmulatorOptions o;
    o.world_size = 2;
    o.timeout_s = bad;
    bool ran = false;
    CHECK_THROWS_AS(emu::run_world(o, [&](Communicator&) { ran = true; }), ConfigError);
    CHECK_THROWS_WITH(emu::run_world(o, [&](Communicator&) { ran = true; }),
                      Contains("EmulatorOptions::timeout_s=") && Contains("must be > 0"));
    CHECK_FALSE(ran);
  }
  emu::EmulatorOptions o;
  o.world_size = 2;
  o.timeout_s = 0.0001;  // below a millisecond: one millisecond, not zero
  CHECK_NOTHROW(emu::run_world(o, [](Communicator& c) { c.barrier(); }));
}

TEST_CASE("run_world: a forced algorithm must exist", "[options]") {
  emu::EmulatorOptions o;
  o.world_size = 2;
  o.algorithm = "rnig";
  CHECK_THROWS_AS(emu::run_world(o, [](Communicator&) {}), ConfigError);
  CHECK_THROWS_WITH(emu::run_world(o, [](Communicator&) {}),
                    Contains("algorithm 'rnig'") && Contains("not a TwinCCL algorithm") &&
                        Contains("ring, direct, tree"));
  o.algorithm = "bruck";  // exists (all_gather only): applies where it exists, as before
  CHECK_NOTHROW(emu::run_world(o, [](Communicator& c) {
    float x = 1;
    c.all_reduce(&x, &x, 1, DataType::float32, ReduceOp::sum());
  }));
}

// The largest world the emulator accepts runs: its exchanges make a rank pair's queues when the
// pair first talks (2n^2 queues made up front took ~20 GB and over a minute at 4096 ranks).
static_assert(kMaxEmulatedRanks % 2 == 0, "the ring below pairs even and odd ranks");

TEST_CASE("run_world: a world of kMaxEmulatedRanks ranks runs a p2p ring", "[options][scale]") {
  emu::EmulatorOptions o;
  o.world_size = kMaxEmulatedRanks;
  o.timeout_s = 120;
  std::vector<int> got(static_cast<std::size_t>(kMaxEmulatedRanks), -1);
  emu::run_world(o, [&](Communicator& c) {
    const int n = c.size(), r = c.rank();
    int mine = r, from_left = -1;
    if (r % 2 == 0) {  // one stream per communicator (NCCL's order): even ranks send first
      c.send(&mine, 1, DataType::int32, (r + 1) % n);
      c.recv(&from_left, 1, DataType::int32, (r + n - 1) % n);
    } else {
      c.recv(&from_left, 1, DataType::int32, (r + n - 1) % n);
      c.send(&mine, 1, DataType::int32, (r + 1) % n);
    }
    got[static_cast<std::size_t>(r)] = from_left;
  });
  for (int r = 0; r < kMaxEmulatedRanks; ++r)
    CHECK(got[static_cast<std::size_t>(r)] == (r + kMaxEmulatedRanks - 1) % kMaxEmulatedRanks);
}

TEST_CASE("run_world: channels, ranks_per_node, check, flight_recorder_ops and fn are checked",
          "[options]") {
  // Before: channels = INT_MAX ran for minutes (a hang), flight_recorder_ops = SIZE_MAX threw
  // std::length_error, a negative ranks_per_node or a CheckLevel cast from 77 were accepted, an
  // empty function threw std::bad_function_call on every rank.
  struct Bad {
    void (*set)(emu::EmulatorOptions&);
    const char* text;
  };
  const std::vector<Bad> bad = {
      {[](emu::EmulatorOptions& o) { o.channels = std::numeric_limits<int>::max(); },
       "EmulatorOptions::channels=2147483647 must be in [1, 64]"},
      {[](emu::EmulatorOptions& o) { o.channels = 0; }, "EmulatorOptions::channels=0"},
      {[](emu::EmulatorOptions& o) { o.ranks_per_node = -5; },
       "EmulatorOptions::ranks_per_node=-5 must be >= 0"},
      {[](emu::EmulatorOptions& o) { o.check = static_cast<CheckLevel>(77); },
       "EmulatorOptions::check=77 must be in [0, 2]"},
      {[](emu::EmulatorOptions& o) {
         o.flight_recorder_ops = std::numeric_limits<std::size_t>::max();
       },
       "EmulatorOptions::flight_recorder_ops=18446744073709551615 must be in [1, 1048576]"},
  };
  for (const Bad& b : bad) {
    emu::EmulatorOptions o;
    o.world_size = 2;
    b.set(o);
    bool ran = false;
    CHECK_THROWS_AS(emu::run_world(o, [&](Communicator&) { ran = true; }), ConfigError);
    CHECK_THROWS_WITH(emu::run_world(o, [&](Communicator&) { ran = true; }), Contains(b.text));
    CHECK_FALSE(ran);
  }
  emu::EmulatorOptions o;
  o.world_size = 2;
  CHECK_THROWS_WITH(emu::run_world(o, RankFunction{}), Contains("the rank function is empty"));
  o.channels = kMaxEmulatedChannels;  // the cap itself runs
  CHECK_NOTHROW(emu::run_world(o, [](Communicator& c) {
    float x[4] = {1, 2, 3, 4};
    c.all_reduce(x, x, 4, DataType::float32, ReduceOp::sum());
  }));
}
