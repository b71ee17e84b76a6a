// EmulatorOptions::stop_requested (twinccl.run's Ctrl-C): the caller's thread asks it while the
// ranks run; a stop aborts the world, so ranks stuck in emulator waits (a recv nobody sends, with
// checks off and a long timeout) end within a poll period, every rank is joined, and run_world
// throws AbortedError with the reason, even though the ranks' own errors differ.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "test_misuse_support.h"
#include "twinccl/emu/emulator.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

emu::EmulatorOptions hanging_options() {
  emu::EmulatorOptions o;
  o.world_size = 3;
  o.timeout_s = 60;           // only the stop can end the run within the test's bound
  o.check = CheckLevel::off;  // no deadlock checker either
  return o;
}

// Rank 0 waits in a barrier, the others in a recv from rank 0 that never comes.
void hang(Communicator& c) {
  if (c.rank() == 0) {
    c.barrier();
  } else {
    float x = 0;
    c.recv(&x, 1, DataType::float32, 0);
  }
}

}  // namespace

TEST_CASE("stop_requested stops ranks waiting in the emulator", "[stop]") {
  emu::EmulatorOptions o = hanging_options();
  const auto start = std::chrono::steady_clock::now();
  std::atomic<int> polls{0};
  o.stop_requested = [&]() -> std::string {
    ++polls;
    return seconds_since(start) > 0.2 ? "Ctrl-C" : "";
  };
  std::string error;
  try {
    emu::run_world(o, hang);
  } catch (const AbortedError& e) {
    error = e.what();
  }
  CHECK(error == "the run was stopped: Ctrl-C");
  CHECK(seconds_since(start) < 0.2 + kEveryRankWithin_s);
  CHECK(polls >= 3);  // asked every 50 ms, and again after the stop until the ranks returned
}

TEST_CASE("stop_requested: a throw counts as a stop, no answer changes nothing", "[stop]") {
  emu::EmulatorOptions o = hanging_options();
  const auto start = std::chrono::steady_clock::now();
  o.stop_requested = [&]() -> std::string {
    if (seconds_since(start) > 0.1) throw std::runtime_error("signal handler failed");
    return "";
  };
  CHECK_THROWS_WITH(emu::run_world(o, hang),
                    Contains("the run was stopped: signal handler failed"));
  CHECK(seconds_since(start) < 0.1 + kEveryRankWithin_s);

  // Never stopping: the run's own result, as without the hook.
  emu::EmulatorOptions quiet;
  quiet.world_size = 4;
  quiet.stop_requested = [] { return std::string(); };
  std::atomic<int> ran{0};
  emu::run_world(quiet, [&](Communicator& c) {
    std::this_thread::sleep_for(std::chrono::milliseconds(120));  // a few polls
    c.barrier();
    ++ran;
  });
  CHECK(ran == 4);
  CHECK_THROWS_AS(emu::run_world(quiet,
                                 [](Communicator& c) {
                                   if (c.rank() == 1) throw InvalidArgument("rank 1's own error");
                                 }),
                  InvalidArgument);
}
