// Latency of a small all_reduce in the emulator at several world sizes: the cost of everything
// that happens when a collective's ranks meet (fingerprint checks, the shared-buffer check of
// emu/src/shared_buffers.h, the led small path or the direct fast path). Not a test: run by hand,
//   bench_emu_collective_latency [ranks...]      (default: 8 64)
// Each round runs kCalls blocking all_reduces per rank after a barrier and keeps the slowest
// rank's mean; the median of kRounds rounds is printed, with heap allocations per call (all ranks).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "emu_all_reduce_timing.h"

using bench::Round;

namespace {

constexpr int kRounds = 7;

Round measure(int ranks, std::size_t count, int calls) {
  return bench::measure_all_reduce(
      {.ranks = ranks, .count = count, .warmup_calls = 20, .calls = calls});
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
