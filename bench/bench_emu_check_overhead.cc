// What the emulator's checks cost: 8-byte all_reduce (2 x float32) on 8 ranks, blocking, with
// CheckLevel::off and CheckLevel::on (deadlock checker, flight recorder, Work bookkeeping).
// Not a test: run it by hand. Target (issue 4): checks on adds less than 20% latency.
//
// Each round runs kCalls all_reduces per rank after a barrier and keeps the slowest rank's mean;
// rounds alternate off/on so that machine noise hits both, and the median round is reported.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "twinccl/run.h"

using namespace twinccl;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kRanks = 8;
constexpr int kCalls = 4000;
constexpr int kRounds = 7;

double mean_latency_us(CheckLevel check) {
  RunOptions o;
  o.world_size = kRanks;
  o.check = check;
  std::vector<double> per_rank(kRanks);
  run(o, [&](Communicator& c) {
    float x[2] = {1.0f, 2.0f};
    for (int i = 0; i < 100; ++i) c.all_reduce(x, x, 2, DataType::float32, ReduceOp::sum());  // warm up
    c.barrier();
    auto t0 = Clock::now();
    for (int i = 0; i < kCalls; ++i) c.all_reduce(x, x, 2, DataType::float32, ReduceOp::sum());
    per_rank[static_cast<std::size_t>(c.rank())] =
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / kCalls;
  });
  return *std::max_element(per_rank.begin(), per_rank.end());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  std::vector<double> off, on;
  for (int round = 0; round < kRounds; ++round) {
    off.push_back(mean_latency_us(CheckLevel::off));
    on.push_back(mean_latency_us(CheckLevel::on));
  }
  double a = median(off), b = median(on);
  fmt::print("8-byte all_reduce, {} ranks, {} calls x {} rounds (median of rounds, slowest rank)\n", kRanks, kCalls,
             kRounds);
  fmt::print("  checks off (TWINCCL_CHECK=0): {:8.2f} us/call\n", a);
  fmt::print("  checks on  (TWINCCL_CHECK=1): {:8.2f} us/call\n", b);
  fmt::print("  overhead: {:+.1f}% (target < 20%)\n", (b / a - 1.0) * 100.0);
  return 0;
}
