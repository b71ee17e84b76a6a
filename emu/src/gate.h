// Gate: a counter that threads sleep on without holding a lock, so that one open() wakes every
// sleeper with one system call and none of them then queues for a mutex (a Linux futex; other
// systems use a mutex and a condition variable).
//
//   std::uint32_t seen = gate.value();
//   if (!ready.load(std::memory_order_acquire)) gate.wait(seen, std::chrono::milliseconds(20));
//   ...                                       // elsewhere: ready.store(true); gate.open();
//
// wait() may return early (a wake-up, a signal): callers re-check their condition in a loop.
// open() skips the system call when nobody sleeps. A waiter yields a few times before it sleeps
// (kYieldsBeforeSleep: with more threads than cores, the gate usually opens meanwhile), unless
// yields are slow because other processes load the cores (yields_before_sleep.h).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "yields_before_sleep.h"

#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <ctime>
#else
#include <condition_variable>
#include <mutex>
#endif

namespace twinccl::emu {

class Gate {
 public:
  std::uint32_t value() const { return word_.load(std::memory_order_acquire); }

  // Sleeps while the counter still equals `seen`, for at most `timeout`.
  void wait(std::uint32_t seen, std::chrono::nanoseconds timeout) {
    for (YieldsBeforeSleep yields(kYieldsBeforeSleep); yields.wanted();) {  // kYieldsBeforeSleep
      if (word_.load(std::memory_order_acquire) != seen) return;
      yields.yield();
    }
    sleepers_.fetch_add(
        1);  // seq_cst with open()'s bump: either open() sees a sleeper or we see the bump
#ifdef __linux__
    auto ns = timeout.count();
    timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAIT_PRIVATE, seen, &ts,
            nullptr, 0);
#else
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return word_.load() != seen; });
#endif
    sleepers_.fetch_sub(1);
  }

  // Bumps the counter and wakes every sleeper.
  void open() {
    word_.fetch_add(1);
    if (sleepers_.load() == 0) return;
#ifdef __linux__
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word_), FUTEX_WAKE_PRIVATE, INT_MAX,
            nullptr, nullptr, 0);
#else
    { std::lock_guard<std::mutex> lock(mu_); }
    cv_.notify_all();
#endif
  }

 private:
  // Before sleeping, a waiter yields the CPU a few times, re-checking the counter. With more rank
  // threads than cores (8 ranks on 2 cores) the threads it yields to are the ones the gate waits
  // for; once they have arrived, the waiter finds the gate open on its next turn without a futex
  // sleep and wake-up. Measured (bench_emu_check_overhead, 8-byte all_reduce, 8 ranks, 2 cores):
  // 0 yields 32.5-33.5 us/call (83% of cycles in the kernel's futex wait/wake and task switch),
  // 2-4 yields 9.8-13 us/call, 8-16 yields 12.3-13.6 us/call. With spare cores a yield returns at
  // once: four cost well under a microsecond. With the cores busy with other processes a yield may
  // give the CPU away for a whole time slice: YieldsBeforeSleep then skips the yields.
  static constexpr int kYieldsBeforeSleep = 4;
  static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));
  std::atomic<std::uint32_t> word_{0};
  std::atomic<int> sleepers_{0};
#ifndef __linux__
  std::mutex mu_;
  std::condition_variable cv_;
#endif
};

}  // namespace twinccl::emu
