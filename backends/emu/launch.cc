// run_emulated: every rank a std::thread with its own EmuCommunicator on one shared world.
// The first rank to fail aborts the world, so every other rank gets an AbortedError instead of
// hanging; the first failure (not a consequent AbortedError) is rethrown to the caller.
#include <atomic>
#include <exception>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "emu/communicator.h"
#include "twinccl/errors.h"

namespace twinccl::emu_backend {

void run_emulated(const RunOptions& options, const RankFunction& fn) {
  int n = options.world_size;
  if (n < 1) throw ConfigError("emulator world size must be >= 1, got " + std::to_string(n));
  auto timeout = std::chrono::milliseconds(static_cast<long long>(options.timeout_s * 1000.0));
  auto world = std::make_shared<emu::World>(n, timeout);
  std::vector<int> ranks(static_cast<std::size_t>(n));
  std::iota(ranks.begin(), ranks.end(), 0);
  EmuConfig config;
  config.algorithm = options.algorithm;
  config.schedule_path = options.schedule_path;
  auto shared = std::make_shared<SharedComm>(world, std::move(ranks), "world", config);

  std::mutex mu;
  std::exception_ptr first_error, first_abort;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        {
          EmuCommunicator comm(shared, r);
          fn(comm);
        }  // the communicator's stream drains here
        world->mark_finished(r);
      } catch (const AbortedError&) {
        std::lock_guard<std::mutex> lock(mu);
        if (!first_abort) first_abort = std::current_exception();
        world->mark_finished(r);
      } catch (const std::exception& e) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!first_error) first_error = std::current_exception();
        }
        world->abort("rank " + std::to_string(r) + " failed: " + e.what());
        world->mark_finished(r);
      } catch (...) {
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!first_error) first_error = std::current_exception();
        }
        world->abort("rank " + std::to_string(r) + " failed with a non-standard exception");
        world->mark_finished(r);
      }
    });
  }
  for (auto& t : threads) t.join();
  if (first_error) std::rethrow_exception(first_error);
  if (first_abort) std::rethrow_exception(first_abort);
}

}  // namespace twinccl::emu_backend
