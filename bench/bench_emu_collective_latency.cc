// Latency of a small all_reduce in the emulator at several world sizes: the cost of everything
// that happens when a collective's ranks meet (fingerprint checks, the shared-buffer check of
// emu/src/shared_buffers.h, the led small path or the direct fast path). Not a test: run by hand,
//   bench_emu_collective_latency [ranks...]      (default: 8 64)
// Each round runs kCalls blocking all_reduces per rank after a barrier and keeps the slowest
// rank's mean; the median of kRounds rounds is printed, with heap allocations per call (all ranks).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <string>
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

constexpr int kRounds = 7;

struct Round {
  double us_per_call;
  double allocations_per_call;
};

Round measure(int ranks, std::size_t count, int calls) {
  RunOptions o;
  o.world_size = ranks;
  std::vector<double> per_rank(static_cast<std::size_t>(ranks));
  long before = 0, after = 0;
  run(o, [&](Communicator& c) {
    std::vector<float> in(count, 1.0f), out(count);
    for (int i = 0; i < 20; ++i)
      c.all_reduce(in.data(), out.data(), count, DataType::float32, ReduceOp::sum());
    c.barrier();
    if (c.rank() == 0) before = g_allocations.load();
    auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i)
      c.all_reduce(in.data(), out.data(), count, DataType::float32, ReduceOp::sum());
    per_rank[static_cast<std::size_t>(c.rank())] =
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls;
    c.barrier();
    if (c.rank() == 0) after = g_allocations.load();
  });
  return {*std::max_element(per_rank.begin(), per_rank.end()),
          static_cast<double>(after - before) / calls};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {8, 64};
  fmt::print("blocking all_reduce, out of place, median of {} rounds (slowest rank's mean)\n",
             kRounds);
  for (int ranks : sizes) {
    for (std::size_t count : {std::size_t{2}, std::size_t{16384}}) {
      int calls = std::max(50, 16000 / ranks / (count > 2 ? 8 : 1));
      std::vector<Round> rounds;
      for (int r = 0; r < kRounds; ++r) rounds.push_back(measure(ranks, count, calls));
      std::sort(rounds.begin(), rounds.end(),
                [](const Round& a, const Round& b) { return a.us_per_call < b.us_per_call; });
      const Round& m = rounds[rounds.size() / 2];
      fmt::print("  {:3d} ranks, {:6d} bytes: {:9.2f} us/call, {:6.2f} heap allocations/call\n",
                 ranks, count * 4, m.us_per_call, m.allocations_per_call);
    }
  }
  return 0;
}
