// Emulator bandwidth: all_reduce, reduce_scatter and all_gather of 64 MiB float32 on 8 ranks,
// next to this machine's memcpy bandwidth. Not a test: run it by hand (scripts/bench.sh).
//
// Memory-traffic floor: every rank's input read once and every output written once, moved at
// the memcpy rate (bytes read + bytes written per second, all cores copying at once).
// Target (issue 2): all_reduce within 2x of that floor.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "twinccl/perf_math.h"
#include "twinccl/run.h"
#include "twinccl/schedule.h"

using namespace twinccl;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t kBytes = 64u << 20;
constexpr int kRanks = 8;
constexpr int kIterations = 10;

// Bytes read + written per second by `threads` threads each copying `bytes` repeatedly.
double memcpy_traffic_gbps(int threads, std::size_t bytes) {
  std::vector<std::vector<char>> src(static_cast<std::size_t>(threads),
                                     std::vector<char>(bytes, 1));
  std::vector<std::vector<char>> dst(static_cast<std::size_t>(threads),
                                     std::vector<char>(bytes, 0));
  double best = 0;
  for (int round = 0; round < 5; ++round) {
    auto t0 = Clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        std::memcpy(dst[static_cast<std::size_t>(t)].data(),
                    src[static_cast<std::size_t>(t)].data(), bytes);
      });
    }
    for (auto& th : pool) th.join();
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 2.0 * static_cast<double>(bytes) * threads / s / 1e9);
  }
  return best;
}

struct Result {
  double time_us;
};

// Mean time per call (slowest rank) of `kind` with kBytes per rank input (all_reduce), per rank
// output (reduce_scatter) or per rank input (all_gather).
double time_collective(OpKind kind, bool schedule_path) {
  RunOptions o;
  o.world_size = kRanks;
  o.schedule_path = schedule_path;
  std::vector<double> per_rank(kRanks);
  std::size_t count = kBytes / sizeof(float);
  run(o, [&](Communicator& c) {
    std::size_t in = kind == OpKind::reduce_scatter ? count * kRanks : count;
    std::size_t out = kind == OpKind::all_gather ? count * kRanks : count;
    Buffer send = c.alloc(in, DataType::float32), recv = c.alloc(out, DataType::float32);
    for (float& v : send.host_span<float>()) v = 1.0f;
    auto once = [&] {
      if (kind == OpKind::all_reduce) c.all_reduce(send, recv);
      if (kind == OpKind::reduce_scatter) c.reduce_scatter(send, recv);
      if (kind == OpKind::all_gather) c.all_gather(send, recv);
    };
    once();
    c.barrier();
    auto t0 = Clock::now();
    for (int i = 0; i < kIterations; ++i) once();
    per_rank[static_cast<std::size_t>(c.rank())] =
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / kIterations;
  });
  return *std::max_element(per_rank.begin(), per_rank.end());
}

// Bytes every rank's input read once plus every output written once, summed over ranks (the
// buffers' sizes by the kind's element rule, counting bytes as one-byte elements).
double floor_traffic_bytes(OpKind kind) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.nranks = kRanks;
  spec.count = kBytes;
  return kRanks * static_cast<double>(input_elements(spec, 0) + output_elements(spec, 0));
}

}  // namespace

int main() {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  double memcpy1 = memcpy_traffic_gbps(1, kBytes);
  double memcpy_all = memcpy_traffic_gbps(static_cast<int>(cores), kBytes);
  fmt::print(
      "# TwinCCL emulator bandwidth, {} ranks, {} MiB float32 per rank, {} iterations, {} cores\n",
      kRanks, kBytes >> 20, kIterations, cores);
  fmt::print(
      "# memcpy traffic (read+write): 1 thread {:.2f} GB/s, {} threads {:.2f} GB/s (floor uses the "
      "latter)\n",
      memcpy1, cores, memcpy_all);
  fmt::print("# {:<15} {:>9} {:>12} {:>14} {:>12} {:>10} {:>10}\n", "collective", "path",
             "time(us)", "traffic(GB/s)", "floor(us)", "x floor", "busbw");
  for (OpKind kind : {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather}) {
    for (bool schedule : {false, true}) {
      double us = time_collective(kind, schedule);
      double traffic = floor_traffic_bytes(kind);
      double floor_us = traffic / (memcpy_all * 1e9) * 1e6;
      std::size_t count = kBytes / sizeof(float);
      double busbw = algbw_bytes(kind, count, DataType::float32, kRanks) / (us * 1e-6) / 1e9 *
                     busbw_factor(kind, kRanks);
      fmt::print("  {:<15} {:>9} {:>12.0f} {:>14.2f} {:>12.0f} {:>10.2f} {:>10.2f}\n", name(kind),
                 schedule ? "schedule" : "fast", us, traffic / (us * 1e-6) / 1e9, floor_us,
                 us / floor_us, busbw);
    }
  }
  return 0;
}
