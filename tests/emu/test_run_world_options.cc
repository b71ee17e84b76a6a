// emu::run_world refuses options it cannot honour before any rank starts, with a ConfigError
// naming the option and the value: a timeout that is not a finite positive number of seconds
// (converting NaN, infinity or 1e300 to milliseconds was undefined behaviour), and a forced
// algorithm no collective has (it silently applied nowhere).
#include <catch2/catch.hpp>
#include <limits>
#include <string>

#include "twinccl/emu/emulator.h"
#include "twinccl/errors.h"

using namespace twinccl;
using Catch::Matchers::Contains;

TEST_CASE("run_world: timeout_s must be in (0, kMaxTimeoutSeconds]", "[options]") {
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
