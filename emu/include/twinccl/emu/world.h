// World: what all ranks of one emulated run share: the abort signal and the wait deadline.
// Every blocking wait in the emulator goes through World::wait so that one failing rank turns
// into an AbortedError on every other rank instead of a hang.
//
//   auto world = std::make_shared<emu::World>(8, std::chrono::seconds(300));
//   world->wait(lock, cv, [&] { return ready; }, [&] { return "waiting for rank 3"; });
//   world->abort("rank 2 threw: ...");   // wakes every waiter with AbortedError
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "twinccl/errors.h"

namespace twinccl::emu {

class World {
 public:
  World(int size, std::chrono::milliseconds timeout)
      : size_(size), timeout_(timeout), finished_(static_cast<std::size_t>(size)) {}

  int size() const { return size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // First reason wins; later calls are ignored. Waiters notice within one poll period.
  void abort(const std::string& reason);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  std::string abort_reason() const;
  // Throws AbortedError when the world was aborted.
  void check_abort() const;

  // A rank's function returned: nobody waits for it any more (see Rendezvous).
  void mark_finished(int global_rank) { finished_[static_cast<std::size_t>(global_rank)].store(true); }
  bool finished(int global_rank) const { return finished_[static_cast<std::size_t>(global_rank)].load(); }

  // Waits on `cv` until pred() holds. Throws AbortedError when the world aborts and TimeoutError
  // (with what() + " after N s") when the deadline passes.
  // `hopeless` (optional) is called at every poll and throws when the wait can never succeed.
  template <class Pred>
  void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Pred pred,
            const std::function<std::string()>& what, const std::function<void()>& hopeless = {}) const {
    if (pred()) return;
    auto deadline = std::chrono::steady_clock::now() + timeout_;
    while (!pred()) {
      check_abort();
      if (hopeless) hopeless();
      if (cv.wait_for(lock, kPollPeriod) == std::cv_status::timeout &&
          std::chrono::steady_clock::now() >= deadline && !pred()) {
        throw_timeout(what());
      }
    }
  }

 private:
  static constexpr std::chrono::milliseconds kPollPeriod{20};
  [[noreturn]] void throw_timeout(const std::string& what) const;

  int size_;
  std::chrono::milliseconds timeout_;
  std::vector<std::atomic<bool>> finished_;
  std::atomic<bool> aborted_{false};
  mutable std::mutex mu_;
  std::string reason_;
};

}  // namespace twinccl::emu
