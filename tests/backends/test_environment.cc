// options_from_environment(): every TWINCCL_* variable is parsed strictly. A bad value is a
// ConfigError naming the variable and the value (and the valid names), never a silent default;
// an empty variable counts as unset.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/run.h"

using Catch::Matchers::Contains;

namespace {

// Sets one variable for the scope of a test and restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

// The error options_from_environment() throws with `name`=`value` (empty when none).
std::string error_for(const char* name, const std::string& value) {
  ScopedEnv env(name, value);
  try {
    (void)twinccl::options_from_environment();
  } catch (const twinccl::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("TWINCCL_WORLD_SIZE takes decimal digits only, 1..4096", "[environment]") {
  for (std::string bad : {"1e3", "0x10", " 8", "8 ", "+8", "-8", "0", "8.0", "4097", "1048576",
                          "99999999999999999999", "eight", "\xff\xfe"}) {
    INFO("TWINCCL_WORLD_SIZE='" << bad << "'");
    std::string message = error_for("TWINCCL_WORLD_SIZE", bad);
    CHECK_THAT(message,
               Contains("TWINCCL_WORLD_SIZE") && Contains("[1, 4096]") && Contains("threads"));
  }
  CHECK_THAT(error_for("TWINCCL_WORLD_SIZE", "0x10"), Contains("'0x10'"));
  CHECK_THAT(error_for("TWINCCL_WORLD_SIZE", "\xff\xfe"), Contains("'\\xff\\xfe'"));
  CHECK(twinccl::kMaxEmulatedRanks == 4096);
  ScopedEnv ok("TWINCCL_WORLD_SIZE", "16");
  CHECK(twinccl::options_from_environment().world_size == 16);
}

TEST_CASE("TWINCCL_ALGO must name a registered algorithm, the error lists them", "[environment]") {
  std::string message = error_for("TWINCCL_ALGO", "bogus");
  CHECK_THAT(message, Contains("TWINCCL_ALGO='bogus'") && Contains("ring") && Contains("tree") &&
                          Contains("direct"));
  CHECK_THAT(error_for("TWINCCL_ALGO", "Ring"), Contains("TWINCCL_ALGO='Ring'"));
  ScopedEnv ok("TWINCCL_ALGO", "tree");
  CHECK(twinccl::options_from_environment().algorithm == "tree");
}

TEST_CASE("TWINCCL_TIMEOUT_S takes plain decimal seconds", "[environment]") {
  for (std::string bad : {"nan", "inf", "0x10", "1e3", " 5", "-1", "0", "5s", "1.2.3", "."}) {
    INFO("TWINCCL_TIMEOUT_S='" << bad << "'");
    CHECK_THAT(error_for("TWINCCL_TIMEOUT_S", bad), Contains("TWINCCL_TIMEOUT_S='" + bad + "'"));
  }
  ScopedEnv ok("TWINCCL_TIMEOUT_S", "0.5");
  CHECK(twinccl::options_from_environment().timeout_s == 0.5);
}

TEST_CASE("every named TWINCCL_* value must be one the variable knows", "[environment]") {
  CHECK_THAT(error_for("TWINCCL_BACKEND", "gloo"),
             Contains("TWINCCL_BACKEND='gloo'") && Contains("emu, nccl"));
  CHECK_THAT(error_for("TWINCCL_CHECK", "on"),
             Contains("TWINCCL_CHECK='on'") && Contains("0, 1, 2"));
  CHECK_THAT(error_for("TWINCCL_CHECK", "01"), Contains("TWINCCL_CHECK='01'"));
  CHECK_THAT(error_for("TWINCCL_EMU_PATH", "slow"),
             Contains("TWINCCL_EMU_PATH='slow'") && Contains("schedule"));
  CHECK_THAT(error_for("TWINCCL_FLIGHT_RECORDER_OPS", "1e3"),
             Contains("TWINCCL_FLIGHT_RECORDER_OPS='1e3'"));
  CHECK_THAT(error_for("TWINCCL_FLIGHT_RECORDER_OPS", "0"), Contains("[1, 1048576]"));
  // Values are cut short in the message.
  std::string huge(100000, '7');
  std::string message = error_for("TWINCCL_WORLD_SIZE", huge);
  CHECK(message.size() < 300);
  CHECK_THAT(message, Contains("..."));
}

TEST_CASE("an empty TWINCCL_* variable counts as unset", "[environment]") {
  ScopedEnv size("TWINCCL_WORLD_SIZE", "");
  ScopedEnv algo("TWINCCL_ALGO", "");
  twinccl::RunOptions o = twinccl::options_from_environment();
  CHECK(o.world_size == 8);
  CHECK(o.algorithm.empty());
}

TEST_CASE("TWINCCL_P2P_STREAMS and TWINCCL_MAX_P2P_LANE_THREADS", "[environment]") {
  CHECK_THAT(error_for("TWINCCL_P2P_STREAMS", "peer"),
             Contains("TWINCCL_P2P_STREAMS='peer'") && Contains("comm, per_peer"));
  for (std::string bad : {"0", "-1", "1e3", " 8", "0x10", "1048577", "99999999999999999999"}) {
    INFO("TWINCCL_MAX_P2P_LANE_THREADS='" << bad << "'");
    CHECK_THAT(error_for("TWINCCL_MAX_P2P_LANE_THREADS", bad),
               Contains("TWINCCL_MAX_P2P_LANE_THREADS='" + bad + "'") && Contains("[1, 1048576]") &&
                   Contains("TWINCCL_P2P_STREAMS=per_peer"));
  }
  twinccl::RunOptions defaults = twinccl::options_from_environment();
  CHECK_FALSE(defaults.p2p_per_peer_streams);
  CHECK(defaults.max_p2p_lane_threads == 8192);
  ScopedEnv streams("TWINCCL_P2P_STREAMS", "per_peer");
  ScopedEnv lanes("TWINCCL_MAX_P2P_LANE_THREADS", "12");
  twinccl::RunOptions o = twinccl::options_from_environment();
  CHECK(o.p2p_per_peer_streams);
  CHECK(o.max_p2p_lane_threads == 12);
}

TEST_CASE("run(argc, argv): a rank that throws a non-standard exception returns 1, no terminate",
          "[environment][run]") {
  // The main() helper's promise: print the error, return 1 when a rank failed. A rank's own
  // `throw 42;` (or a type of its own) is rethrown by run() as it is; before, it escaped the
  // helper and ended the program in std::terminate (abort, exit code 134).
  ScopedEnv backend("TWINCCL_BACKEND", "emu");
  ScopedEnv size("TWINCCL_WORLD_SIZE", "2");
  std::ostringstream err;
  std::streambuf* old = std::cerr.rdbuf(err.rdbuf());
  int rc = -1;
  try {
    rc = twinccl::run(0, nullptr, [](twinccl::Communicator& c) {
      if (c.rank() == 1) throw 42;
      c.barrier();
    });
  } catch (...) {
    std::cerr.rdbuf(old);
    throw;
  }
  std::cerr.rdbuf(old);
  CHECK(rc == 1);
  CHECK_THAT(err.str(), Contains("twinccl: a rank failed with an exception not derived from "
                                 "std::exception"));
}
