// "pat": log-step all-gather and reduce-scatter in the spirit of NCCL's PAT (Parallel Aggregated
// Trees): ceil(log2 n) steps, distances halving for the all-gather (few blocks travel far,
// many travel near) and the exact reverse for the reduce-scatter.
//
// How it works, all-gather, 4 ranks; rank r holds blocks at offsets S (block r+j for j in S):
//   S = {0}.  step 0, distance 2: r sends block r to r-2, receives block r+2   S = {0, 2}
//             step 1, distance 1: r sends r, r+2 to r-1, receives r+1, r+3      S = {0,1,2,3}
// At distance d a rank sends the offsets j in S with j + d < n, so non-powers of two never send
// a block twice. Reduce-scatter runs the same trees backwards (distance 1 first): rank r sends
// its partials for offsets j + d to r + d, which folds them into offset j (received op mine);
// offset 0, its own block, is complete after the last step (finalize) and lives in output,
// the other partials in scratch. Fold order of block b: the reversed all-gather tree of b,
// partner first at every level. Pieces (chunk_elements) run one after another.
#include <algorithm>

#include "algorithms/algorithm_list.h"
#include "algorithms/schedule_builder.h"

namespace twinccl::algo {
namespace {

// Distances in all-gather order and the offsets held before each step.
struct Plan {
  std::vector<int> distance;
  std::vector<std::vector<int>> held;  // held[k]: offsets before all-gather step k
};

Plan plan_for(int n) {
  Plan plan;
  int top = 1;
  while (top < n) top *= 2;
  std::vector<int> held = {0};
  for (int d = top / 2; d >= 1; d /= 2) {
    plan.distance.push_back(d);
    plan.held.push_back(held);
    std::vector<int> grown = held;
    for (int j : held) {
      if (j + d < n) grown.push_back(j + d);
    }
    std::sort(grown.begin(), grown.end());
    held = grown;
  }
  return plan;
}

RankSchedule all_gather_pat(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  const Plan plan = plan_for(spec.nranks);
  return log_step_all_gather(spec, params, rank, plan.distance, plan.held);
}

RankSchedule reduce_scatter_pat(const CollectiveSpec& spec, const AlgorithmParams& params,
                                int rank) {
  const int n = spec.nranks;
  const std::size_t count = spec.count;
  LogicalSchedule ls;
  if (n == 1) {
    add_local_copy(ls, spec, in(0, count), out(0, count));
    return ls.lower(params, Pipelining::sequential);
  }
  ls.need_scratch(static_cast<std::size_t>(n - 1) * count);
  std::vector<bool> touched(static_cast<std::size_t>(n), false);
  const auto input_of = [&](int j) {
    return in(static_cast<std::size_t>(wrap(rank + j, n)) * count, count);
  };
  const auto partial = [&](int j) {
    return j == 0 ? out(0, count) : scratch(static_cast<std::size_t>(j - 1) * count, count);
  };
  const auto current = [&](int j) {
    return touched[static_cast<std::size_t>(j)] ? partial(j) : input_of(j);
  };
  const Plan plan = plan_for(n);
  const std::size_t steps = plan.distance.size();
  for (std::size_t i = 0; i < steps; ++i) {
    const std::size_t k = steps - 1 - i;  // the all-gather step this one reverses
    const int d = plan.distance[k];
    for (int j : plan.held[k]) {
      if (j + d < n) ls.add(i, send_op(wrap(rank + d, n), current(j + d)));
    }
    for (int j : plan.held[k]) {
      if (j + d >= n) continue;
      ls.add(i, recv_reduce_op(wrap(rank - d, n), current(j), partial(j), j == 0 && k == 0));
      touched[static_cast<std::size_t>(j)] = true;
    }
  }
  return ls.lower(params, Pipelining::sequential);
}

}  // namespace

const Algorithm& pat_algorithm() {
  static const ListedAlgorithm algorithm(
      "pat", "PAT-like log-step all-gather (distance halving) and reduce-scatter (its reverse)",
      {{OpKind::all_gather, all_gather_pat}, {OpKind::reduce_scatter, reduce_scatter_pat}});
  return algorithm;
}

}  // namespace twinccl::algo
