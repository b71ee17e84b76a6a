// CommFailure: the error state of one rank's communicator, so that nothing queued behind a failed
// operation ever runs (NCCL: after an asynchronous error the communicator is in an error state and
// ncclCommAbort cancels outstanding work; torch's ProcessGroupNCCL aborts the communicator).
//
// How it works: the first failure of the rank on this communicator wins (an operation that threw
// on any of its streams, a wait() of the rank's thread that threw, a Work destroyed during stack
// unwinding before its operation ran). From then on every operation of the rank on it, queued or
// issued later, is cancelled when its stream reaches it: it touches no user memory, its sends and
// recvs leave tombstones for their peers, and its Work fails with AbortedError naming the first
// failure. The world's abort cancels the same way.
//
//   rank 1:  irecv #1 [fails: deadlock]  isend #2 [queued]  all_reduce #0 [queued]
//            -> isend, all_reduce: AbortedError "send on comm 'world' rank 1 (a.cc:4) was
//               cancelled before it started: recv on comm 'world' rank 1 (a.cc:3) failed first: .."
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <string_view>

namespace twinccl::emu {

class World;

class CommFailure {
 public:
  CommFailure(std::shared_ptr<World> world, std::string comm, int rank);
  // "all_reduce #3 on comm 'world' rank 1 (a.cc:10)" (seq_plus_one == 0: no number).
  std::string label(std::string_view op, std::uint64_t seq_plus_one,
                    const std::source_location& where) const;
  // The first call wins: `what` ("recv on comm 'world' rank 1 (a.cc:3) failed: deadlock ...").
  void fail(const std::string& what) noexcept;
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  // The first failure's text ("" before any).
  std::string first() const;
  // Non-null (an AbortedError for `label`) when an operation must not start: this communicator
  // failed on this rank, or the world aborted.
  std::exception_ptr cancellation(const std::string& label) const;
  // Stops whatever runs anywhere (a Work destroyed during unwinding while its operation runs).
  void abort_world(const std::string& reason) noexcept;
  // The world's wait deadline (the bound of a wait for an operation that must stop).
  std::chrono::milliseconds timeout() const;

 private:
  std::shared_ptr<World> world_;
  std::string comm_;
  int rank_;
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  std::string first_;
};

}  // namespace twinccl::emu
