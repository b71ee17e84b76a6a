// The ranks that destroyed their copy of a split communicator. None of them calls it again, so a
// peer waiting for one of them in a collective or a send/recv fails at once with AbortedError, as
// for a rank whose function returned, instead of waiting for the timeout.
//
//   shared.departures.leave(rank);                 // EmuCommunicator of a split, once drained
//   if (departures->left(q)) throw AbortedError(...);  // Rendezvous, Exchange
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

namespace twinccl::emu {

class Departures {
 public:
  explicit Departures(int nranks)
      : left_(std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(nranks))) {}
  void leave(int rank) noexcept {
    left_[static_cast<std::size_t>(rank)].store(true, std::memory_order_release);
  }
  bool left(int rank) const noexcept {
    return left_[static_cast<std::size_t>(rank)].load(std::memory_order_acquire);
  }

 private:
  std::unique_ptr<std::atomic<bool>[]> left_;
};

}  // namespace twinccl::emu
