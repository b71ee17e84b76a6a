// The ranks-as-threads test harness shared by every emulator test: runs `fn` on n emulated ranks
// (emu::run_world, the emulator alone: no run(), no simulator) and rethrows the first rank's
// exception (the others get AbortedError instead of hanging).
//
//   run_ranks(8, [](Communicator& c) { ... REQUIRE(...) ... });
//   auto outcomes = run_ranks_capture(2, fn, {.timeout_s = 1});  // CheckOptions   // every rank's
//   error and time CHECK(outcomes[1].type == "DeadlockError");
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "twinccl/emu/emulator.h"
#include "twinccl/emu/options.h"

namespace twinccl::testing {

struct HarnessOptions {
  bool schedule_path = false;  // force the schedule path (no direct fast path)
  std::string algorithm;       // force an algorithm where it exists
  double timeout_s = 60.0;
};

void run_ranks(int nranks, const RankFunction& fn, const HarnessOptions& options = {});

// Options of the misuse and fault-injection tests (a separate struct: HarnessOptions is built
// positionally by other tests). Use designated initializers: {.timeout_s = 1, .check = ...}.
struct CheckOptions {
  bool schedule_path = false;
  double timeout_s = 10.0;
  CheckLevel check = CheckLevel::on;
  FaultHook fault_hook;              // emulator fault injection
  std::string flight_recorder_path;  // JSON dump of the flight recorder when the run fails
  std::size_t flight_recorder_ops = 64;
  std::string algorithm;
  bool p2p_per_peer_streams = false;  // EmulatorOptions::p2p_per_peer_streams (torch's p2p)
};

// What one rank's function ended with.
struct RankOutcome {
  std::string type;     // "" (returned normally), "DeadlockError", "MismatchError", "TimeoutError",
                        // "AbortedError", "InvalidArgument", "Error" (other twinccl),
                        // "std::exception", "non-standard"
  std::string message;  // what()
  double seconds = 0;   // from the start of the run to the rank's return
};

// Runs `fn` on n ranks and returns every rank's outcome (errors are recorded, then rethrown so
// that the world aborts as it would in a program; the run's own rethrow is swallowed).
// `run_error` (optional) gets the run's own error: for a misuse found after a rank's function
// returned (an async Work never waited on), the only place it shows.
std::vector<RankOutcome> run_ranks_capture(int nranks, const RankFunction& fn,
                                           const CheckOptions& options = {},
                                           std::string* run_error = nullptr);

}  // namespace twinccl::testing
