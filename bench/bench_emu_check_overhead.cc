// What the emulator's checks cost: 8-byte all_reduce (2 x float32) on 8 ranks, blocking, with
// CheckLevel::off and CheckLevel::on (deadlock checker, flight recorder, Work bookkeeping).
// And a group of two all_reduces (the shared-buffer check across a group's collectives).
// Not a test: run it by hand. Target (issue 4): checks on adds less than 20% latency.
//
// Each round runs kCalls all_reduces per rank after a barrier and keeps the slowest rank's mean;
// rounds alternate off/on so that machine noise hits both, and the median round is reported.
// It also counts heap allocations (a counting operator new) in the timed calls of all ranks.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "emu_all_reduce_timing.h"

using namespace twinccl;
using bench::Round;

namespace {

constexpr int kRanks = 8;
constexpr int kCalls = 4000;
constexpr int kRounds =
    15;  // cheap since the small path is fast; more rounds steady the median on a loaded machine

Round measure(CheckLevel check, int group = 1) {
  return bench::measure_all_reduce({.ranks = kRanks,
                                    .count = 2,
                                    .warmup_calls = 100,
                                    .calls = group > 1 ? kCalls / 4 : kCalls,
                                    .in_place = true,
                                    .check = check,
                                    .group = group});
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
  // A group of two: checks on adds the shared-buffer check across its collectives
  // (emu/src/group_buffers.h) to the rest.
  std::vector<double> group_off, group_on;
  for (int round = 0; round < kRounds; ++round) {
    group_off.push_back(measure(CheckLevel::off, 2).us_per_call);
    group_on.push_back(measure(CheckLevel::on, 2).us_per_call);
  }
  const double ga = median(group_off), gb = median(group_on);
  fmt::print("a group of two 8-byte all_reduces, {} ranks, {} groups x {} rounds\n", kRanks,
             kCalls / 4, kRounds);
  fmt::print("  checks off: {:8.2f} us/group, checks on: {:8.2f} us/group, overhead {:+.1f}%\n", ga,
             gb, (gb / ga - 1.0) * 100.0);
  return 0;
}
