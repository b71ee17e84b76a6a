// Latency of an all_reduce in the emulator at several world sizes: the cost of everything that
// happens when a collective's ranks meet (fingerprint checks, the shared-buffer check of
// emu/src/shared_buffers.h, the led small path, the direct fast path or the schedule path).
// Not a test: run by hand,
//   bench_emu_collective_latency [--schedule] [--shapes] [--bytes=B] [ranks...]  (default: 8 64)
// Each round runs blocking all_reduces per rank after a barrier and keeps the slowest rank's mean;
// the median of kRounds rounds is printed, with the median process CPU time per call (all
// threads: less sensitive to other load on the machine) and heap allocations per call (all ranks),
// for 8 B, 64 KiB and 1 MiB per rank (--bytes=8|65536|1048576: that size only). --schedule:
// TWINCCL_EMU_PATH=schedule (the ring's Schedule run step by step instead of the direct fast path).
// --shapes: a loop whose count cycles over 100 sizes (4 KiB .. 400 KiB) on the schedule path,
// printing the live heap bytes after each pass: they must level off however many distinct shapes go
// by (the per-rank schedule cache is bounded).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "emu_all_reduce_timing.h"

using bench::Round;

namespace {

constexpr int kRounds = 7;

void latency(int ranks, bool schedule_path, std::size_t only_bytes) {
  for (std::size_t count : {std::size_t{2}, std::size_t{16384}, std::size_t{262144}}) {
    if (only_bytes != 0 && count * 4 != only_bytes) continue;
    // about 16000 rank-calls of 8 B, 2000 of 64 KiB, 320 of 1 MiB per round
    std::size_t budget = count == 2 ? 16000 : count == 16384 ? 2000 : 320;
    int calls = std::max(10, static_cast<int>(budget) / ranks);
    // Led small calls: each rank's first call as the leader sizes its staging once, so warm up
    // until every rank has likely led (cheap at 8 B).
    int warmup = count == 2 ? std::max(20, 8 * ranks) : 20;
    std::vector<Round> rounds;
    for (int r = 0; r < kRounds; ++r) {
      rounds.push_back(bench::measure_all_reduce({.ranks = ranks,
                                                  .count = count,
                                                  .warmup_calls = warmup,
                                                  .calls = calls,
                                                  .schedule_path = schedule_path}));
    }
    std::sort(rounds.begin(), rounds.end(),
              [](const Round& a, const Round& b) { return a.us_per_call < b.us_per_call; });
    const Round& m = rounds[rounds.size() / 2];
    std::sort(rounds.begin(), rounds.end(),
              [](const Round& a, const Round& b) { return a.cpu_us_per_call < b.cpu_us_per_call; });
    fmt::print(
        "  {:3d} ranks, {:7d} bytes: {:9.2f} us/call, {:9.2f} CPU us/call, {:7.2f} heap "
        "allocations/call\n",
        ranks, count * 4, m.us_per_call, rounds[rounds.size() / 2].cpu_us_per_call,
        m.allocations_per_call);
  }
}

// Counts cycling over 100 distinct sizes, kPasses times: the live heap after each pass.
void changing_shapes(int ranks) {
  using namespace twinccl;
  constexpr int kSizes = 100;
  constexpr int kPasses = 5;
  constexpr std::size_t kMaxCount = 1024 + 99 * 1024;  // 4 KiB .. 400 KiB per rank
  RunOptions o;
  o.world_size = ranks;
  o.schedule_path = true;
  std::vector<long> live_after_pass(kPasses);
  long live_before = 0;
  run(o, [&](Communicator& c) {
    std::vector<float> in(kMaxCount, 1.0f), out(kMaxCount);
    c.barrier();
    if (c.rank() == 0) live_before = bench::g_live_bytes.load();
    for (int pass = 0; pass < kPasses; ++pass) {
      for (int i = 0; i < kSizes; ++i) {
        std::size_t count = 1024 + static_cast<std::size_t>(i) * 1024;
        c.all_reduce(in.data(), out.data(), count, DataType::float32, ReduceOp::sum());
      }
      c.barrier();
      if (c.rank() == 0)
        live_after_pass[static_cast<std::size_t>(pass)] = bench::g_live_bytes.load();
      c.barrier();
    }
  });
  fmt::print("  {:3d} ranks, {} passes over {} counts (schedule path): live heap after each pass",
             ranks, kPasses, kSizes);
  for (long live : live_after_pass)
    fmt::print(" {:+.2f}", static_cast<double>(live - live_before) / 1048576.0);
  fmt::print(" MiB (vs before the loop); peak live heap of the process {:.2f} MiB\n",
             static_cast<double>(bench::g_peak_live_bytes.load()) / 1048576.0);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  bool schedule_path = false, shapes = false;
  std::size_t only_bytes = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--schedule") == 0) {
      schedule_path = true;
    } else if (std::strncmp(argv[i], "--bytes=", 8) == 0) {
      only_bytes = std::strtoull(argv[i] + 8, nullptr, 10);
      if (only_bytes != 8 && only_bytes != 65536 && only_bytes != 1048576) {
        fmt::print(stderr, "bench_emu_collective_latency: --bytes must be 8, 65536 or 1048576\n");
        return 2;
      }
    } else if (std::strcmp(argv[i], "--shapes") == 0) {
      shapes = true;
    } else {
      int n = std::atoi(argv[i]);
      if (n < 1 || n > 1024) {
        fmt::print(stderr, "bench_emu_collective_latency: ranks must be 1..1024, got '{}'\n",
                   argv[i]);
        return 2;
      }
      sizes.push_back(n);
    }
  }
  if (sizes.empty()) sizes = {8, 64};
  if (shapes) {
    for (int ranks : sizes) changing_shapes(ranks);
    return 0;
  }
  fmt::print(
      "blocking all_reduce, out of place, {} path, median of {} rounds (slowest rank's mean)\n",
      schedule_path ? "schedule" : "default (led small / direct fast)", kRounds);
  for (int ranks : sizes) latency(ranks, schedule_path, only_bytes);
  return 0;
}
