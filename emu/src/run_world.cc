// emu::run_world: every rank a std::thread with its own EmuCommunicator on one shared world.
// The first rank to fail aborts the world, so every other rank gets an AbortedError instead of
// hanging; the first failure (not a consequent AbortedError) is rethrown to the caller. With
// checks on, a rank whose function returns with async Works never waited on fails with
// InvalidArgument, and a failed run writes the flight recorder to options.flight_recorder_path.
// options.on_rank_start sees each rank's communicator first (the backend attaches the trace
// recorder there when TWINCCL_TOPOLOGY / TWINCCL_TRACE asks for simulated time).
// A rank thread that cannot be created ends the run with ResourceError after joining the others.
// While the ranks run, the calling thread asks options.stop_requested every kStopPollPeriod
// (Ctrl-C in twinccl.run): a stop aborts the world, so every rank's wait ends, and is rethrown.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <mutex>
#include <numeric>
#include <ostream>
#include <thread>
#include <vector>

#include "communicator.h"
#include "twinccl/emu/options.h"
#include "twinccl/errors.h"
#include "twinccl/output_file.h"

namespace twinccl::emu {
namespace {

constexpr const char* kFlightRecorder = "TWINCCL_FLIGHT_RECORDER";

// Written while a failure is being reported: a dump that cannot be written (the disk filled
// since the check at the start) is said on stderr and never replaces the run's own error.
void dump_flight_recorder(const emu::World& world, const std::string& path) {
  if (path.empty() || world.recorder() == nullptr) return;
  try {
    write_output_file(kFlightRecorder, path,
                      [&](std::ostream& f) { f << world.recorder()->json() << "\n"; });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "twinccl: the flight recorder was not written: %s\n", e.what());
  }
}

// Counts the rank threads that are done, so that the caller can poll while it waits for them.
class RanksDone {
 public:
  void one() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++count_;
    }
    cv_.notify_all();
  }
  // Waits until `started` ranks are done, asking `stop_requested` every kStopPollPeriod; returns
  // the first stop reason (the world is aborted with it), or "" when nothing asked to stop.
  std::string wait(std::size_t started, const std::function<std::string()>& stop_requested,
                   World& world) {
    std::string stop;
    std::unique_lock<std::mutex> lock(mu_);
    while (count_ < started) {
      if (!stop_requested) {
        cv_.wait(lock, [&] { return count_ >= started; });
        break;
      }
      cv_.wait_for(lock, kStopPollPeriod, [&] { return count_ >= started; });
      lock.unlock();
      std::string reason;
      try {
        reason = stop_requested();
      } catch (const std::exception& e) {
        reason = e.what();
      } catch (...) {
        reason = "a non-standard exception from EmulatorOptions::stop_requested";
      }
      if (!reason.empty() && stop.empty()) {
        stop = "the run was stopped: " + reason;
        world.abort(stop);
      }
      lock.lock();
    }
    return stop;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::size_t count_ = 0;
};

}  // namespace

void run_world(const EmulatorOptions& options, const RankFunction& fn) {
  check_options(options);
  if (!fn) throw InvalidArgument("run_world: the rank function is empty (a default RankFunction)");
  const int n = options.world_size;
  auto timeout = std::chrono::milliseconds(
      std::max<long long>(1, static_cast<long long>(options.timeout_s * 1000.0)));
  emu::WorldChecks checks;
  checks.enabled = options.check != CheckLevel::off;
  checks.flight_recorder_ops = options.flight_recorder_ops;
  auto world = std::make_shared<emu::World>(n, timeout, checks);
  std::vector<int> ranks(static_cast<std::size_t>(n));
  std::iota(ranks.begin(), ranks.end(), 0);
  auto shared = std::make_shared<SharedComm>(world, std::move(ranks), "world", options);

  std::mutex mu;
  std::exception_ptr first_error, first_abort;
  RanksDone done;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  // A rank failed with `error`: it becomes the run's error (the first one wins) and every other
  // rank is woken with it. Never throws, short of memory too (a throw here would end the process).
  auto fail = [&](int r, std::exception_ptr error) noexcept {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (!first_error) first_error = error;
    }
    try {
      std::string text;
      try {
        std::rethrow_exception(error);
      } catch (const std::bad_alloc&) {
        text = "out of memory (std::bad_alloc)";
      } catch (const std::exception& e) {
        text = e.what();
      } catch (...) {
        text = "a non-standard exception";
      }
      world->note_failure(r, text);
      world->abort("rank " + std::to_string(r) + " failed: " + text);
    } catch (...) {
      world->abort_without_reason();
    }
    world->mark_finished(r);
  };
  auto rank_main = [&](int r) {
    struct Done {
      RanksDone& done;
      ~Done() { done.one(); }
    } signal_done{done};
    this_rank_thread() = {world.get(), r};
    try {
      {
        EmuCommunicator comm(shared, r);
        if (options.on_rank_start) options.on_rank_start(comm);
        fn(comm);
        if (std::string open = comm.unclosed_group(); !open.empty()) throw InvalidArgument(open);
      }  // the communicator's stream drains here
      if (std::string misuse = world->take_misuse(r); !misuse.empty())
        throw InvalidArgument(misuse);
      world->mark_finished(r);
    } catch (const AbortedError& e) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!first_abort) first_abort = std::current_exception();
      }
      try {
        world->note_failure(r, e.what());
      } catch (...) {  // out of memory for the text: only a detail is lost
      }
      world->mark_finished(r);
    } catch (const std::bad_alloc&) {  // the rank's own code, or a call that allocates
      std::exception_ptr error = std::current_exception();
      try {
        error = std::make_exception_ptr(ResourceError(
            "rank " + std::to_string(r) + " of " + std::to_string(n) +
            " ran out of memory (std::bad_alloc) in its function, outside any TwinCCL operation "
            "(the process's memory or its address-space limit, ulimit -v, is exhausted)"));
      } catch (...) {  // keep the bad_alloc itself
      }
      fail(r, error);
    } catch (...) {
      fail(r, std::current_exception());
    }
  };
  // A rank whose thread cannot be created  };
  // A rank whose thread cannot be created fails the run with ResourceError; the ranks already
  // started see the world aborted (and the missing ranks as returned), and are joined.
  std::string start_failure;
  for (int r = 0; r < n && start_failure.empty(); ++r) {
    try {
      if (options.fault_hook) {
        FaultPoint point;
        point.rank = r;
        point.stage = FaultStage::thread_start;
        options.fault_hook(point);
      }
      threads.emplace_back(rank_main, r);
    } catch (const std::exception& e) {
      start_failure =
          "could not start the thread of rank " + std::to_string(r) + " of " + std::to_string(n) +
          ": " + e.what() +
          " (the process may have reached its thread limit: ulimit -u, cgroup pids.max, or its "
          "address-space limit, ulimit -v: each thread reserves its stack)";
    } catch (...) {
      start_failure = "could not start the thread of rank " + std::to_string(r) + " of " +
                      std::to_string(n) + ": a non-standard exception";
    }
    if (!start_failure.empty()) {
      world->abort(start_failure);
      for (int q = r; q < n; ++q) {
        world->note_failure(q, start_failure);
        world->mark_finished(q);
      }
    }
  }
  const std::string stopped = done.wait(threads.size(), options.stop_requested, *world);
  for (auto& t : threads) t.join();
  if (!stopped.empty()) {
    dump_flight_recorder(*world, options.flight_recorder_path);
    throw AbortedError(stopped);
  }
  if (!start_failure.empty()) {
    dump_flight_recorder(*world, options.flight_recorder_path);
    throw ResourceError(start_failure);
  }
  if (first_error || first_abort) dump_flight_recorder(*world, options.flight_recorder_path);
  if (first_error) std::rethrow_exception(first_error);
  if (first_abort) std::rethrow_exception(first_abort);
}

}  // namespace twinccl::emu

namespace twinccl {

std::string flight_recorder_json(const Communicator& comm) {
  const auto* emu = dynamic_cast<const emu::EmuCommunicator*>(&comm);
  if (emu == nullptr || emu->world()->recorder() == nullptr) return "{}";
  return emu->world()->recorder()->json();
}

}  // namespace twinccl
