// Timing blocking all_reduces in the emulator, shared by bench_emu_check_overhead and
// bench_emu_collective_latency. Include it in exactly one file of a benchmark program: it replaces
// operator new/delete with a counting one (the heap allocations of the timed calls).
//
// How it works: one run of `ranks` rank threads; each warms up, meets the others at a barrier,
// then times `calls` all_reduces of `count` float32; the slowest rank's mean is the round's time,
// and rank 0 reads the allocation counter around the timed calls of all ranks (between barriers).
// The counting operator new also keeps the live heap bytes (malloc_usable_size) and their peak.
#pragma once

#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <vector>

#include "twinccl/run.h"

namespace bench {
inline std::atomic<long> g_allocations{0};
inline std::atomic<long> g_live_bytes{0};  // operator new's memory not yet deleted
inline std::atomic<long> g_peak_live_bytes{0};

inline void forget(void* p) noexcept {
  if (p != nullptr)
    g_live_bytes.fetch_sub(static_cast<long>(malloc_usable_size(p)), std::memory_order_relaxed);
}
}  // namespace bench

void* operator new(std::size_t bytes) {
  bench::g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) {
    long live = bench::g_live_bytes.fetch_add(static_cast<long>(malloc_usable_size(p)),
                                              std::memory_order_relaxed) +
                static_cast<long>(malloc_usable_size(p));
    long peak = bench::g_peak_live_bytes.load(std::memory_order_relaxed);
    while (live > peak && !bench::g_peak_live_bytes.compare_exchange_weak(peak, live)) {
    }
    return p;
  }
  throw std::bad_alloc();
}
// GCC inlines these into new-expressions and takes std::free for a mismatch: it is this file's
// operator new's std::malloc.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
  bench::forget(p);
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  bench::forget(p);
  std::free(p);
}
#pragma GCC diagnostic pop

namespace bench {

struct Round {
  double us_per_call;
  double allocations_per_call;  // all ranks together
  double cpu_us_per_call = 0;   // the process's CPU time (user + system, all threads)
};

inline double process_cpu_us() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct AllReduceRound {
  int ranks = 8;
  std::size_t count = 2;  // float32 elements
  int warmup_calls = 20;
  int calls = 1000;
  bool in_place = false;
  twinccl::CheckLevel check = twinccl::CheckLevel::on;
  int group = 1;  // all_reduces per timed call; > 1: issued in one group_start/group_end
  bool schedule_path = false;  // TWINCCL_EMU_PATH=schedule: the algorithm's Schedule, no fast path
};

inline Round measure_all_reduce(const AllReduceRound& a) {
  using namespace twinccl;
  using Clock = std::chrono::steady_clock;
  RunOptions o;
  o.world_size = a.ranks;
  o.check = a.check;
  o.schedule_path = a.schedule_path;
  std::vector<double> per_rank(static_cast<std::size_t>(a.ranks));
  long before = 0, after = 0;
  double cpu_before = 0, cpu_after = 0;
  run(o, [&](Communicator& c) {
    std::vector<float> in(a.count, 1.0f), out(a.count);
    float* recv = a.in_place ? in.data() : out.data();
    for (int i = 0; i < a.warmup_calls; ++i)
      c.all_reduce(in.data(), recv, a.count, DataType::float32, ReduceOp::sum());
    c.barrier();
    if (c.rank() == 0) {
      before = g_allocations.load();
      cpu_before = process_cpu_us();
    }
    const auto t0 = Clock::now();
    for (int i = 0; i < a.calls; ++i) {
      if (a.group > 1) c.group_start();
      for (int g = 0; g < a.group; ++g)
        c.all_reduce(in.data(), recv, a.count, DataType::float32, ReduceOp::sum());
      if (a.group > 1) c.group_end();
    }
    per_rank[static_cast<std::size_t>(c.rank())] =
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / a.calls;
    c.barrier();
    if (c.rank() == 0) {
      after = g_allocations.load();
      cpu_after = process_cpu_us();
    }
  });
  return {*std::max_element(per_rank.begin(), per_rank.end()),
          static_cast<double>(after - before) / a.calls, (cpu_after - cpu_before) / a.calls};
}

}  // namespace bench
