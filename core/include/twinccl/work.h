// Work: the handle of an asynchronous operation (torch's Work, MindSpore's handle).
//
//   twinccl::Work w = comm.all_reduce(x, y, n, DataType::float32, ReduceOp::sum(), {.async_op =
//   true}); compute_something_else(); w.wait();   // rethrows the operation's error, if any
#pragma once

#include <chrono>
#include <cmath>
#include <exception>
#include <memory>
#include <ratio>

#include "twinccl/errors.h"

namespace twinccl {

// The longest timeout Work::wait_for hands to a backend: 100 years. A longer one (hours::max(),
// an infinite double) waits as long as that, which is "until finished" for any run; clamping
// keeps the backend's now() + timeout from overflowing the clock (before, such a wait returned
// false at once).
inline constexpr std::chrono::nanoseconds kLongestWaitFor = std::chrono::hours(24 * 365 * 100);

// What a backend implements behind a Work.
class WorkState {
 public:
  virtual ~WorkState() = default;
  virtual void wait() = 0;                                      // blocks; rethrows failure
  virtual bool test() = 0;                                      // true once finished
  virtual bool wait_for(std::chrono::nanoseconds timeout) = 0;  // true once finished
  // Makes the device stream `stream` (a cudaStream_t on NCCL) wait for the operation without
  // blocking the host. Backends without device streams (the emulator) block the host instead.
  virtual void wait_stream(void* stream) {
    (void)stream;
    wait();
  }
  // A Work handle was destroyed during stack unwinding (an exception is leaving the scope that
  // held it, freeing the memory its operation may use): the backend makes sure the operation
  // never touches that memory afterwards (the emulator cancels it when it has not started, or
  // aborts the run and waits, bounded, when it runs). Must not throw.
  virtual void abandoned() noexcept {}
};

class Work {
 public:
  Work() = default;  // an already-completed operation
  explicit Work(std::shared_ptr<WorkState> state) : state_(std::move(state)) {}
  // Copies and moves count the exceptions in flight where they are made, as the handle they are.
  Work(const Work& other) : state_(other.state_) {}
  Work(Work&& other) noexcept : state_(std::move(other.state_)) {}
  Work& operator=(const Work& other) {
    state_ = other.state_;
    return *this;
  }
  Work& operator=(Work&& other) noexcept {
    state_ = std::move(other.state_);
    return *this;
  }
  // Destroyed by stack unwinding (more exceptions in flight than where it was made): the
  // operation is abandoned (WorkState::abandoned), so it never uses the unwound memory.
  ~Work() {
    if (state_ && std::uncaught_exceptions() > uncaught_at_creation_) state_->abandoned();
  }

  // Blocks until the operation finished; rethrows its error (typed, derived from twinccl::Error).
  void wait() {
    if (state_) state_->wait();
  }
  // Orders the device stream `stream` (a cudaStream_t under NCCL) after the operation and returns
  // at once: work queued there later sees the result. The host is not blocked (on the emulator,
  // which has no device streams, this is wait()). wait() is the host-blocking form.
  void wait_stream(void* stream) {
    if (state_) state_->wait_stream(stream);
  }
  // True once the operation finished (successfully or not: wait() then reports the error).
  bool test() { return !state_ || state_->test(); }
  // Waits at most `timeout` (any duration type; negative = 0, longer than kLongestWaitFor =
  // kLongestWaitFor; NaN throws InvalidArgument); true if the operation finished in time.
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> timeout) {
    std::chrono::nanoseconds clamped = clamp_timeout(timeout);
    return !state_ || state_->wait_for(clamped);
  }
  const std::shared_ptr<WorkState>& state() const { return state_; }

  // `timeout` in nanoseconds, clamped to [0, kLongestWaitFor] without overflow (compared as long
  // double, exact for every count of nanoseconds a clock can hold).
  template <class Rep, class Period>
  static std::chrono::nanoseconds clamp_timeout(std::chrono::duration<Rep, Period> timeout) {
    std::chrono::duration<long double, std::nano> t = timeout;
    if (std::isnan(t.count())) throw InvalidArgument("Work::wait_for: the timeout is NaN");
    if (t.count() <= 0) return std::chrono::nanoseconds(0);
    if (t >= kLongestWaitFor) return kLongestWaitFor;
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t);
  }

 private:
  std::shared_ptr<WorkState> state_;
  int uncaught_at_creation_ = std::uncaught_exceptions();
};

// A Work that also keeps `keep` (a staging buffer, say) alive until the Work is dropped.
inline Work keep_alive(Work inner, std::shared_ptr<void> keep) {
  class Holding final : public WorkState {
   public:
    Holding(Work w, std::shared_ptr<void> k) : inner_(std::move(w)), keep_(std::move(k)) {}
    void wait() override { inner_.wait(); }
    bool test() override { return inner_.test(); }
    bool wait_for(std::chrono::nanoseconds t) override { return inner_.wait_for(t); }
    void wait_stream(void* stream) override { inner_.wait_stream(stream); }
    void abandoned() noexcept override {
      if (inner_.state()) inner_.state()->abandoned();
    }

   private:
    Work inner_;
    std::shared_ptr<void> keep_;
  };
  return Work(std::make_shared<Holding>(std::move(inner), std::move(keep)));
}

}  // namespace twinccl
