// The algorithm registry: lookup by collective and name, the default choice, schedule building,
// and the ring facts shared with the emulator's fast path.
#include <algorithm>
#include <string>

#include "algorithms/algorithm_list.h"
#include "twinccl/algorithm_defaults.h"
#include "twinccl/algorithms.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/op_traits.h"

namespace twinccl {
namespace {

bool serves(const Algorithm& a, OpKind kind) {
  const std::vector<OpKind> kinds = a.collectives();
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

std::string names_for(OpKind kind) {
  std::string list;
  for (const Algorithm* a : algorithms_for(kind)) {
    if (!list.empty()) list += ", ";
    list += a->name();
  }
  return list.empty() ? "none" : list;
}

std::string kinds_of(const Algorithm& a) {
  std::string list;
  for (OpKind k : a.collectives()) {
    if (!list.empty()) list += ", ";
    list += name(k);
  }
  return list;
}

}  // namespace

std::string Algorithm::why_not(const CollectiveSpec& spec, const AlgorithmParams& params) const {
  if (!serves(*this, spec.kind)) {
    return "it serves " + kinds_of(*this);
  }
  if (spec.nranks < 1) return "nranks=" + std::to_string(spec.nranks) + " (needs at least 1)";
  if (params.channels < 1) return "channels=" + std::to_string(params.channels) + " (needs >= 1)";
  if (params.ranks_per_node < 0) {
    return "ranks_per_node=" + std::to_string(params.ranks_per_node) + " is negative";
  }
  if (is_rooted(spec.kind) && (spec.root < 0 || spec.root >= spec.nranks)) {
    return "root=" + std::to_string(spec.root) + " out of range [0, " +
           std::to_string(spec.nranks) + ")";
  }
  return {};
}

const std::vector<const Algorithm*>& all_algorithms() {
  static const std::vector<const Algorithm*> algorithms = {
      &algo::ring_algorithm(),  &algo::direct_algorithm(),
      &algo::tree_algorithm(),  &algo::halving_doubling_algorithm(),
      &algo::bruck_algorithm(), &algo::pat_algorithm(),
      &algo::nvls_algorithm(),  &algo::hierarchical_algorithm(),
  };
  return algorithms;
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const Algorithm* a : all_algorithms()) {
    std::string n(a->name());
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(std::move(n));
  }
  return names;
}

std::vector<const Algorithm*> algorithms_for(OpKind kind) {
  std::vector<const Algorithm*> found;
  for (const Algorithm* a : all_algorithms()) {
    if (serves(*a, kind)) found.push_back(a);
  }
  return found;
}

const Algorithm& find_algorithm(OpKind kind, std::string_view algorithm) {
  for (const Algorithm* a : algorithms_for(kind)) {
    if (a->name() == algorithm) return *a;
  }
  for (const Algorithm* a : all_algorithms()) {
    if (a->name() == algorithm) {
      throw InvalidArgument("algorithm " + quoted_text(algorithm) + " does not apply to " +
                            std::string(name(kind)) + ": it serves " + kinds_of(*a) +
                            "; available for " + std::string(name(kind)) + ": " + names_for(kind));
    }
  }
  throw InvalidArgument("unknown algorithm " + quoted_text(algorithm) + " for " +
                        std::string(name(kind)) + "; available: " + names_for(kind));
}

std::string_view default_algorithm(OpKind kind) {
  for (const Algorithm* a : algorithms_for(kind)) {
    if (a->name() == "ring") return "ring";
  }
  return "direct";
}

bool is_default_algorithm(OpKind kind, std::string_view algorithm) {
  static const std::vector<std::string_view> defaults = [] {
    std::vector<std::string_view> d;
    for (std::size_t k = 0; k < kOpKindCount; ++k) d.push_back(default_algorithm(OpKind(k)));
    return d;
  }();
  const auto i = static_cast<std::size_t>(kind);
  return i < defaults.size() && defaults[i] == algorithm;
}

bool serves_algorithm(OpKind kind, std::string_view algorithm) {
  for (const Algorithm* a : algorithms_for(kind)) {
    if (a->name() == algorithm) return true;
  }
  return false;
}

RankSchedule build_rank_schedule(const CollectiveSpec& spec, std::string_view algorithm,
                                 const AlgorithmParams& params, int rank) {
  const Algorithm& a = find_algorithm(spec.kind, algorithm);
  const std::string reason = a.why_not(spec, params);
  if (!reason.empty()) {
    throw InvalidArgument("algorithm '" + std::string(algorithm) + "' does not apply to " +
                          std::string(name(spec.kind)) + " with " + std::to_string(spec.nranks) +
                          " ranks: " + reason);
  }
  if (rank < 0 || rank >= spec.nranks) {
    throw InvalidArgument("algorithm '" + std::string(algorithm) + "' for " +
                          std::string(name(spec.kind)) + ": rank " + std::to_string(rank) +
                          " out of range [0, " + std::to_string(spec.nranks) + ")");
  }
  return a.generate(spec, params, rank);
}

Schedule build_schedule(const CollectiveSpec& spec, std::string_view algorithm,
                        const AlgorithmParams& params) {
  Schedule schedule;
  schedule.algorithm = std::string(algorithm);
  schedule.spec = spec;
  schedule.ranks.reserve(static_cast<std::size_t>(std::max(spec.nranks, 0)));
  for (int r = 0; r < spec.nranks; ++r) {
    schedule.ranks.push_back(build_rank_schedule(spec, algorithm, params, r));
  }
  if (spec.nranks < 1) build_rank_schedule(spec, algorithm, params, 0);  // throws the reason
  return schedule;
}

ElementRange ring_chunk(std::size_t count, int nranks, int chunk) {
  if (nranks < 1 || chunk < 0 || chunk >= nranks) {
    throw InvalidArgument("ring_chunk: chunk " + std::to_string(chunk) + " out of range [0, " +
                          std::to_string(nranks) + ")");
  }
  const auto n = static_cast<std::size_t>(nranks);
  const auto c = static_cast<std::size_t>(chunk);
  // c*count/n without overflowing for large counts.
  const auto split = [&](std::size_t i) { return (count / n) * i + (count % n) * i / n; };
  return {split(c), split(c + 1)};
}

int ring_fold_rank(int nranks, int chunk, int k) {
  if (nranks < 1 || k < 0 || k >= nranks) {
    throw InvalidArgument("ring_fold_rank: k=" + std::to_string(k) + " out of range [0, " +
                          std::to_string(nranks) + ")");
  }
  return (((chunk + 1 + k) % nranks) + nranks) % nranks;
}

}  // namespace twinccl
