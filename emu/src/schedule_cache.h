// What one rank of a communicator keeps from one collective to the next, so that a training loop
// of identical calls does not rebuild its schedule path on every call: the rank's schedules by
// call shape (a small LRU) and the staging memory the executors work in.
//
//   RankCache cache;                                         // one per rank and communicator
//   const RankSchedule& s = cache.schedule(spec, "ring", params, rank);   // built on a miss
//   execute_schedule({meeting, rank, &reduction, dtype, &cache.staging()}, s, in, out);
//   cache.trim(nranks);                                      // after the call: bounded memory
//
// How it works: a schedule depends only on the CollectiveSpec (kind, ranks, count, root, the
// uneven variants' counts), the algorithm, the AlgorithmParams and the rank; slices are in
// elements, so data type, reduce op, buffers and in-place or not do not change it. Entries are
// compared field by field and the least recently used is evicted when the entry count or the
// byte budget would be exceeded; a schedule larger than the budget is run once and dropped.
// Staging grows to the largest call and is released after a call that made it larger than the
// budget. The budget per rank is kWorldBudgetBytes / nranks within [kMinRankBudgetBytes,
// kMaxRankBudgetBytes], so a communicator keeps at most ~64 MiB of schedules, and as much of
// staging, whatever shapes it runs (a 64-rank ring all_reduce schedule is ~27 KB per rank; at
// 1024 ranks one is ~400 KB, over the 64 KiB share: large worlds build each call's schedule as
// before).
//
// Only the rank's own collectives use it: they run one at a time on the communicator's stream
// (inline on the rank's thread or on the stream's worker, ordered by the stream's queue), so no
// lock is needed and nothing here is shared with another rank.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exchange.h"
#include "twinccl/algorithms.h"
#include "twinccl/op_traits.h"
#include "twinccl/reduction.h"

namespace twinccl::emu {

// Per-rank budget of the cache and the staging memory (bytes), see above.
inline constexpr std::size_t kWorldBudgetBytes = std::size_t{64} << 20;
inline constexpr std::size_t kMinRankBudgetBytes = std::size_t{16} << 10;
inline constexpr std::size_t kMaxRankBudgetBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxCachedSchedules = 16;
std::size_t rank_budget_bytes(int nranks);

// Working memory of one rank's executors, reused across calls.
struct RankStaging {
  std::vector<char> scratch;             // the schedule's scratch buffer (scratch_count elements)
  std::vector<char> tmp_a, tmp_b;        // scaled contributions (premul_sum, avg): one block each
  std::vector<char> fold_acc, fold_tmp;  // the fast path's accumulator and scaled contribution
  std::vector<Posted> posted;            // the sends of one step (stable while posted)
  std::vector<int> posted_to;
  std::vector<ReduceOp> ops;  // every rank's reduce op (Reduction::make)
  std::size_t bytes() const;
};

class RankCache {
 public:
  // This rank's schedule of `algorithm` for `spec`; valid until the next call of schedule() or
  // trim(). Throws what build_rank_schedule throws (nothing is cached then).
  const RankSchedule& schedule(const CollectiveSpec& spec, std::string_view algorithm,
                               const AlgorithmParams& params, int rank);
  RankStaging& staging() { return staging_; }
  // After a call: drops a schedule too large to keep and staging above the budget.
  void trim(int nranks);

  // default_algorithm(kind) and "does `forced` serve kind", asked of the registry once per kind
  // (both allocate there).
  std::string_view default_algorithm(OpKind kind);
  bool serves(OpKind kind, const std::string& forced);

  // For tests and benchmarks.
  std::size_t entries() const { return entries_.size(); }
  std::size_t schedule_bytes() const { return bytes_; }
  std::uint64_t builds() const { return builds_; }
  std::uint64_t hits() const { return hits_; }

 private:
  struct Entry {
    CollectiveSpec spec;
    std::string algorithm;
    AlgorithmParams params;
    int rank = 0;
    RankSchedule schedule;
    std::size_t bytes = 0;
    std::uint64_t last_used = 0;
  };
  static constexpr std::size_t kKinds = kOpKindCount;
  std::vector<std::unique_ptr<Entry>> entries_;
  RankSchedule uncached_;  // the last schedule too large to keep (dropped by trim)
  std::size_t bytes_ = 0;  // of entries_
  std::uint64_t clock_ = 0, builds_ = 0, hits_ = 0;
  RankStaging staging_;
  std::array<std::string_view, kKinds> default_{};
  std::string serves_name_;                   // the forced name serves_ is about
  std::array<std::int8_t, kKinds> serves_{};  // 0: not asked yet, 1: serves, 2: does not
};

}  // namespace twinccl::emu
