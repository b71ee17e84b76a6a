// The TwinCCL half of the side-by-side table scripts/bench.sh prints next to Open MPI
// (bench/peer_mpi.c measures the same things the same way): 8 ranks,
//   all_reduce_8B_us          mean time of back-to-back 8-byte all_reduces (2 x float32), us
//   all_reduce_64MiB_ms       mean time of a 64 MiB float32 all_reduce per rank, ms
//   reduce_scatter_64MiB_ms   mean time of a reduce_scatter reading 64 MiB per rank, ms
// each the slowest rank's mean over the calls of a round (2000 small, 3 big, after a warm-up and
// a barrier), the median of the rounds (5 small, 3 big); one "name value" line each.
//
//   build-*/bench/bench_peer_twinccl
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "twinccl/run.h"

using namespace twinccl;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kRanks = 8;
constexpr std::size_t kBigBytes = 64u << 20;

enum class Measure { small_all_reduce, big_all_reduce, big_reduce_scatter };

// Slowest rank's mean seconds per call over `calls` calls after a warm-up and a barrier.
double one_round(Measure measure, int calls) {
  RunOptions o;
  o.world_size = kRanks;
  std::vector<double> per_rank(kRanks);
  run(o, [&](Communicator& c) {
    const std::size_t big = kBigBytes / sizeof(float);
    const bool small = measure == Measure::small_all_reduce;
    const std::size_t in = small ? 2 : big;
    const std::size_t out = measure == Measure::big_reduce_scatter ? big / kRanks : in;
    Buffer send = c.alloc(in, DataType::float32), recv = c.alloc(out, DataType::float32);
    for (float& v : send.host_span<float>()) v = 1.0f;
    auto once = [&] {
      if (measure == Measure::big_reduce_scatter) {
        c.reduce_scatter(send, recv);
      } else {
        c.all_reduce(send, recv);
      }
    };
    for (int i = 0; i < (small ? 100 : 1); ++i) once();
    c.barrier();
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) once();
    per_rank[static_cast<std::size_t>(c.rank())] =
        std::chrono::duration<double>(Clock::now() - t0).count() / calls;
  });
  return *std::max_element(per_rank.begin(), per_rank.end());
}

double median_of_rounds(Measure measure, int calls, int rounds) {
  std::vector<double> v;
  for (int r = 0; r < rounds; ++r) v.push_back(one_round(measure, calls));
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  fmt::print("all_reduce_8B_us {:.2f}\n",
             median_of_rounds(Measure::small_all_reduce, 2000, 5) * 1e6);
  fmt::print("all_reduce_64MiB_ms {:.2f}\n", median_of_rounds(Measure::big_all_reduce, 3, 3) * 1e3);
  fmt::print("reduce_scatter_64MiB_ms {:.2f}\n",
             median_of_rounds(Measure::big_reduce_scatter, 3, 3) * 1e3);
  return 0;
}
