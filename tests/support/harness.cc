#include "support/harness.h"

#include <chrono>
#include <exception>
#include <mutex>

#include "twinccl/errors.h"

namespace twinccl::testing {
namespace {

emu::EmulatorOptions to_emulator_options(int nranks, const CheckOptions& options) {
  emu::EmulatorOptions o;
  o.world_size = nranks;
  o.schedule_path = options.schedule_path;
  o.algorithm = options.algorithm;
  o.timeout_s = options.timeout_s;
  o.check = options.check;
  o.fault_hook = options.fault_hook;
  o.flight_recorder_path = options.flight_recorder_path;
  o.flight_recorder_ops = options.flight_recorder_ops;
  o.p2p_per_peer_streams = options.p2p_per_peer_streams;
  return o;
}

std::string type_of(const std::exception& e) {
  if (dynamic_cast<const DeadlockError*>(&e)) return "DeadlockError";
  if (dynamic_cast<const MismatchError*>(&e)) return "MismatchError";
  if (dynamic_cast<const TimeoutError*>(&e)) return "TimeoutError";
  if (dynamic_cast<const AbortedError*>(&e)) return "AbortedError";
  if (dynamic_cast<const InvalidArgument*>(&e)) return "InvalidArgument";
  if (dynamic_cast<const Error*>(&e)) return "Error";
  return "std::exception";
}

}  // namespace

void run_ranks(int nranks, const RankFunction& fn, const HarnessOptions& options) {
  CheckOptions check;
  check.schedule_path = options.schedule_path;
  check.algorithm = options.algorithm;
  check.timeout_s = options.timeout_s;
  emu::run_world(to_emulator_options(nranks, check), fn);
}

std::vector<RankOutcome> run_ranks_capture(int nranks, const RankFunction& fn,
                                           const CheckOptions& options, std::string* run_error) {
  std::vector<RankOutcome> outcomes(static_cast<std::size_t>(nranks));
  std::mutex mu;
  auto start = std::chrono::steady_clock::now();
  auto record = [&](int rank, std::string type, std::string message) {
    std::lock_guard<std::mutex> lock(mu);
    RankOutcome& o = outcomes[static_cast<std::size_t>(rank)];
    o.type = std::move(type);
    o.message = std::move(message);
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  try {
    emu::run_world(to_emulator_options(nranks, options), [&](Communicator& c) {
      int rank = c.rank();
      try {
        fn(c);
      } catch (const std::exception& e) {
        record(rank, type_of(e), e.what());
        throw;
      } catch (...) {
        record(rank, "non-standard", "");
        throw;
      }
      record(rank, "", "");
    });
  } catch (const std::exception& e) {
    // Every rank's outcome is recorded above, except a misuse raised after the function returned.
    if (run_error != nullptr) *run_error = e.what();
  } catch (...) {
    if (run_error != nullptr) *run_error = "a non-standard exception";
  }
  return outcomes;
}

}  // namespace twinccl::testing
