// What the emulator's checks cost: 8-byte all_reduce (2 x float32) on 8 ranks, blocking, with
// CheckLevel::off and CheckLevel::on (deadlock checker, flight recorder, Work bookkeeping).
// Not a test: run it by hand. Target (issue 4): checks on adds less than 20% latency.
//
// Each round runs kCalls all_reduces per rank after a barrier and keeps the slowest rank's mean;
// rounds alternate off/on so that machine noise hits both, and the median round is reported.
// It also counts heap allocations (a counting operator new) in the timed calls of all ranks.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <vector>

#include "twinccl/run.h"

using namespace twinccl;
using Clock = std::chrono::steady_clock;

namespace {
std::atomic<long> g_allocations{0};
}  // namespace

void* operator new(std::size_t bytes) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

constexpr int kRanks = 8;
constexpr int kCalls = 4000;
constexpr int kRounds =
    15;  // cheap since the small path is fast; more rounds steady the median on a loaded machine

struct Round {
  double us_per_call;
  double allocations_per_call;  // all ranks together
};

Round measure(CheckLevel check) {
  RunOptions o;
  o.world_size = kRanks;
  o.check = check;
  std::vector<double> per_rank(kRanks);
  long allocations_before = 0, allocations_after = 0;
  run(o, [&](Communicator& c) {
    float x[2] = {1.0f, 2.0f};
    for (int i = 0; i < 100; ++i)
      c.all_reduce(x, x, 2, DataType::float32, ReduceOp::sum());  // warm up
    c.barrier();
    if (c.rank() == 0) allocations_before = g_allocations.load();
    auto t0 = Clock::now();
    for (int i = 0; i < kCalls; ++i) c.all_reduce(x, x, 2, DataType::float32, ReduceOp::sum());
    per_rank[static_cast<std::size_t>(c.rank())] =
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / kCalls;
    c.barrier();
    if (c.rank() == 0) allocations_after = g_allocations.load();
  });
  return {*std::max_element(per_rank.begin(), per_rank.end()),
          static_cast<double>(allocations_after - allocations_before) / kCalls};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  std::vector<double> off, on, allocations_off, allocations_on;
  for (int round = 0; round < kRounds; ++round) {
    Round a = measure(CheckLevel::off);
    Round b = measure(CheckLevel::on);
    off.push_back(a.us_per_call);
    on.push_back(b.us_per_call);
    allocations_off.push_back(a.allocations_per_call);
    allocations_on.push_back(b.allocations_per_call);
  }
  double a = median(off), b = median(on);
  fmt::print("8-byte all_reduce, {} ranks, {} calls x {} rounds (median of rounds, slowest rank)\n",
             kRanks, kCalls, kRounds);
  fmt::print(
      "  checks off (TWINCCL_CHECK=0): {:8.2f} us/call, {:.2f} heap allocations/call (all ranks)\n",
      a, median(allocations_off));
  fmt::print(
      "  checks on  (TWINCCL_CHECK=1): {:8.2f} us/call, {:.2f} heap allocations/call (all ranks)\n",
      b, median(allocations_on));
  fmt::print("  overhead: {:+.1f}% (target < 20%)\n", (b / a - 1.0) * 100.0);
  return 0;
}
