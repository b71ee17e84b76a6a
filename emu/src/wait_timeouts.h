// WaitTimeouts: how long each rank of one communicator waits in its operations before a
// TimeoutError. Unset, a rank waits the world's timeout (TWINCCL_TIMEOUT_S); set
// (set_wait_timeout, which torch's process-group timeout= and dist.set_timeout reach), it waits
// its own, longer or shorter, as a Gloo or NCCL process group honours the timeout it was given.
//
//   WaitTimeouts timeouts(4);
//   timeouts.set(1, std::chrono::milliseconds(2000), "init_process_group(timeout=0:00:02)");
//   world->wait(lock, cv, pred, what, hopeless, site, timeouts.of(1));
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace twinccl::emu {

// One rank's bound: 0 ms = unset (the world's). Set by the rank's own thread between its
// operations, read by every wait of the rank's operations (its stream's threads too).
class WaitTimeout {
 public:
  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(ms_.load(std::memory_order_acquire));
  }
  bool is_set() const { return timeout().count() > 0; }
  // What set it ("init_process_group(timeout=0:00:02)"), for the TimeoutError's message.
  std::string source() const {
    std::lock_guard<std::mutex> lock(mu_);
    return source_;
  }
  void set(std::chrono::milliseconds timeout, std::string source) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      source_ = std::move(source);
    }
    ms_.store(timeout.count(), std::memory_order_release);
  }

 private:
  std::atomic<long long> ms_{0};
  mutable std::mutex mu_;
  std::string source_;
};

class WaitTimeouts {
 public:
  explicit WaitTimeouts(int nranks) {
    slots_.reserve(static_cast<std::size_t>(nranks));
    for (int r = 0; r < nranks; ++r) slots_.push_back(std::make_unique<WaitTimeout>());
  }
  void set(int rank, std::chrono::milliseconds timeout, std::string source) {
    slots_[static_cast<std::size_t>(rank)]->set(timeout, std::move(source));
  }
  const WaitTimeout* of(int rank) const { return slots_[static_cast<std::size_t>(rank)].get(); }

 private:
  std::vector<std::unique_ptr<WaitTimeout>> slots_;  // stable addresses
};

// `rank`'s bound in `timeouts` (nullptr: no communicator's timeouts, the world's alone).
inline const WaitTimeout* bound_of(const WaitTimeouts* timeouts, int rank) {
  return timeouts != nullptr ? timeouts->of(rank) : nullptr;
}

}  // namespace twinccl::emu
