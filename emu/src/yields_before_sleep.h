// YieldsBeforeSleep: the few CPU yields a waiter makes before it sleeps (Gate::wait, World::wait),
// made only while they pay off.
//
//   YieldsBeforeSleep yields(4);
//   while (!ready() && yields.wanted()) yields.yield();
//   if (!ready()) sleep_on_futex_or_cv();
//
// Why yield: with more rank threads than cores (8 ranks on 2 cores) the threads a waiter yields to
// are this run's own ranks, the ones it waits for, and it finds its condition met on its next turn
// without a futex sleep and wake-up (gate.h: ~33 -> ~10 us per 8-byte all_reduce, 8 ranks).
// Why stop: when other processes keep the cores busy, a yield hands the CPU to one of them, and
// the yielding rank stays runnable but is charged as if it had run (Linux 6.18's EEVDF: its rank
// threads had run 18 ms each in 14 s, always runnable, 1568 time slices each), so the run crawls
// while using almost no CPU. Measured on this 2-core machine, tests/emu/test_all_algorithms.cc's
// schedule-path case: under 3 `while :; do :; done` loops 55% of yields took over 1 ms (most 3-10
// ms) and the test used 0.9 s of CPU in 190 s without finishing (with no yields: done in 40 s);
// beside another engineer's builds and tests (load average 12) 0.4% took over 1 ms, 3% over 100
// us, and the yields still paid (10-11 s; 14-18 s when a looser rule turned them off). So each
// yield is timed, and when more than 1 in kSlowShare of the process's last kWindow yields took
// over kSlowYield (busy loops: nearly every window; that load: 7 windows in 22000), yields are off
// for every waiter of the process for a back-off: 20 ms, doubled (at most kMostBackoff) when it
// happens again within kForget of the last back-off's end. Waits sleep at once meanwhile. A slow
// yield also ends its own wait's yields.
// Every wait keeps its deadline and abort path: this only decides between yielding and sleeping.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace twinccl::emu {

class YieldsBeforeSleep {
 public:
  explicit YieldsBeforeSleep(int most) : left_(most) {}

  // Whether to yield once more: false when the budget is spent or yields are off (the process's
  // recent yields were slow). The caller then sleeps; after a yield() it re-checks its condition.
  bool wanted() {
    if (left_ <= 0) return false;
    std::int64_t resume_at = resume_at_ns_.load(std::memory_order_relaxed);
    if (resume_at == 0 || now_ns() >= resume_at) return true;
    left_ = 0;
    return false;
  }

  // Yields the CPU once, timed (after wanted() said true).
  void yield() {
    --left_;
    std::int64_t start = now_ns();
    std::this_thread::yield();
    std::int64_t end = now_ns();
    bool slow = end - start > kSlowYield.count();
    if (slow) {
      slow_.fetch_add(1, std::memory_order_relaxed);
      left_ = 0;
    }
    if ((yields_.fetch_add(1, std::memory_order_relaxed) + 1) % kWindow != 0) return;
    if (slow_.exchange(0, std::memory_order_relaxed) * kSlowShare > kWindow) back_off(end);
  }

  static constexpr std::chrono::nanoseconds kSlowYield{std::chrono::milliseconds(1)};
  static constexpr std::uint32_t kWindow = 64;
  static constexpr std::uint32_t kSlowShare = 2;
  static constexpr std::chrono::nanoseconds kFirstBackoff{std::chrono::milliseconds(20)};
  static constexpr std::chrono::nanoseconds kMostBackoff{std::chrono::seconds(2)};
  static constexpr std::chrono::nanoseconds kForget{std::chrono::seconds(1)};

 private:
  static std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // Process-wide and approximate (relaxed, racing updates are harmless): whether other processes
  // load the cores is the machine's state, not one thread's, so one rank's slow yields spare the
  // others theirs.
  static void back_off(std::int64_t now) {
    std::int64_t resumed =
        resume_at_ns_.load(std::memory_order_relaxed);  // the last back-off's end
    std::int64_t backoff = backoff_ns_.load(std::memory_order_relaxed);
    backoff = resumed == 0 || now - resumed > kForget.count()
                  ? kFirstBackoff.count()
                  : std::min(2 * backoff, kMostBackoff.count());
    backoff_ns_.store(backoff, std::memory_order_relaxed);
    resume_at_ns_.store(now + backoff, std::memory_order_relaxed);
  }

  int left_;
  static inline std::atomic<std::uint32_t> yields_{0};
  static inline std::atomic<std::uint32_t> slow_{0};
  static inline std::atomic<std::int64_t> resume_at_ns_{0};  // 0: never backed off
  static inline std::atomic<std::int64_t> backoff_ns_{kFirstBackoff.count()};
};

}  // namespace twinccl::emu
