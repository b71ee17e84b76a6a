#include "schedule_cache.h"

#include <algorithm>

#include "twinccl/algorithm_defaults.h"

namespace twinccl::emu {
namespace {

bool same_spec(const CollectiveSpec& a, const CollectiveSpec& b) {
  return a.kind == b.kind && a.nranks == b.nranks && a.count == b.count && a.root == b.root &&
         a.counts == b.counts && a.displs == b.displs && a.matrix == b.matrix &&
         a.send_displs == b.send_displs && a.recv_displs == b.recv_displs;
}

bool same_params(const AlgorithmParams& a, const AlgorithmParams& b) {
  return a.channels == b.channels && a.chunk_elements == b.chunk_elements &&
         a.ranks_per_node == b.ranks_per_node;
}

template <class T>
std::size_t capacity_bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

// What an entry holds on the heap, roughly (allocator overheads left out).
std::size_t entry_bytes(const CollectiveSpec& spec, std::string_view algorithm,
                        const RankSchedule& schedule) {
  std::size_t bytes = 256 + algorithm.size() + capacity_bytes(spec.counts) +
                      capacity_bytes(spec.displs) + capacity_bytes(spec.matrix) +
                      capacity_bytes(spec.send_displs) + capacity_bytes(spec.recv_displs) +
                      capacity_bytes(schedule.steps);
  for (const Step& step : schedule.steps) bytes += capacity_bytes(step.ops);
  return bytes;
}

template <class T>
void release_if_over(std::vector<T>& v, std::size_t budget) {
  if (capacity_bytes(v) > budget) std::vector<T>().swap(v);
}

}  // namespace

std::size_t rank_budget_bytes(int nranks) {
  std::size_t share = kWorldBudgetBytes / static_cast<std::size_t>(std::max(nranks, 1));
  return std::clamp(share, kMinRankBudgetBytes, kMaxRankBudgetBytes);
}

std::size_t RankStaging::bytes() const {
  return capacity_bytes(scratch) + capacity_bytes(tmp_a) + capacity_bytes(tmp_b) +
         capacity_bytes(fold_acc) + capacity_bytes(fold_tmp) + capacity_bytes(posted) +
         capacity_bytes(posted_to) + capacity_bytes(ops);
}

const RankSchedule& RankCache::schedule(const CollectiveSpec& spec, std::string_view algorithm,
                                        const AlgorithmParams& params, int rank) {
  ++clock_;
  for (const std::unique_ptr<Entry>& e : entries_) {
    if (e->rank == rank && e->algorithm == algorithm && same_params(e->params, params) &&
        same_spec(e->spec, spec)) {
      e->last_used = clock_;
      ++hits_;
      return e->schedule;
    }
  }
  RankSchedule built = build_rank_schedule(spec, algorithm, params, rank);
  ++builds_;
  std::size_t bytes = entry_bytes(spec, algorithm, built);
  std::size_t budget = rank_budget_bytes(spec.nranks);
  if (bytes > budget) {  // run once, never kept
    uncached_ = std::move(built);
    return uncached_;
  }
  while (!entries_.empty() && (entries_.size() >= kMaxCachedSchedules || bytes_ + bytes > budget)) {
    auto oldest =
        std::min_element(entries_.begin(), entries_.end(),
                         [](const auto& a, const auto& b) { return a->last_used < b->last_used; });
    bytes_ -= (*oldest)->bytes;
    entries_.erase(oldest);
  }
  auto entry = std::make_unique<Entry>();
  entry->spec = spec;
  entry->algorithm = std::string(algorithm);
  entry->params = params;
  entry->rank = rank;
  entry->schedule = std::move(built);
  entry->bytes = bytes;
  entry->last_used = clock_;
  entries_.push_back(std::move(entry));
  bytes_ += bytes;
  return entries_.back()->schedule;
}

void RankCache::trim(int nranks) {
  if (!uncached_.steps.empty()) uncached_ = RankSchedule{};
  std::size_t budget = rank_budget_bytes(nranks);
  if (staging_.bytes() <= budget) return;
  release_if_over(staging_.scratch, budget / 2);
  release_if_over(staging_.posted, budget / 4);
  release_if_over(staging_.posted_to, budget / 4);
  release_if_over(staging_.ops, budget / 4);
  if (staging_.bytes() > budget) staging_ = RankStaging{};
}

std::string_view RankCache::default_algorithm(OpKind kind) {
  std::string_view& known = default_[static_cast<std::size_t>(kind)];
  if (known.empty()) known = twinccl::default_algorithm(kind);  // a literal: "ring" or "direct"
  return known;
}

bool RankCache::serves(OpKind kind, const std::string& forced) {
  if (forced != serves_name_) {
    serves_name_ = forced;
    serves_.fill(0);
  }
  std::int8_t& known = serves_[static_cast<std::size_t>(kind)];
  if (known == 0) {
    known = serves_algorithm(kind, forced) ? 1 : 2;
  }
  return known == 1;
}

}  // namespace twinccl::emu
