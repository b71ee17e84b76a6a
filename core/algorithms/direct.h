// Private: the direct (one step, everyone talks to everyone it needs) schedules.
#pragma once

#include "algorithms/schedule_builder.h"
#include "twinccl/algorithms.h"

namespace twinccl::algo {

RankSchedule all_to_all_direct(const CollectiveSpec& spec, const AlgorithmParams& params, int rank);
RankSchedule gather_direct(const CollectiveSpec& spec, const AlgorithmParams& params, int rank);
RankSchedule scatter_direct(const CollectiveSpec& spec, const AlgorithmParams& params, int rank);
RankSchedule broadcast_direct(const CollectiveSpec& spec, const AlgorithmParams& params, int rank);
RankSchedule all_gather_direct(const CollectiveSpec& spec, const AlgorithmParams& params, int rank);
RankSchedule reduce_scatter_direct(const CollectiveSpec& spec, const AlgorithmParams& params,
                                   int rank);
RankSchedule reduce_direct(const CollectiveSpec& spec, const AlgorithmParams& params, int rank);

// Direct reduce-scatter building block (nvls uses it too): from logical step `first_step`, every
// rank sends block q of its input to rank q and receives its own block from everyone into
// scratch, then folds them with local reduce ops in ring order (p+1)%n, ..., p (its own input
// last), one fold per step; the last fold writes `result` with finalize.
// Returns the number of logical steps used (n: 1 exchange + n-1 folds).
std::size_t add_direct_reduce_scatter(LogicalSchedule& ls, int nranks, int rank,
                                      const std::vector<Block>& input_blocks, Slice result,
                                      std::size_t first_step);
// Direct all-gather building block: rank r sends `mine` to every other rank and receives block q
// of `output_blocks` from rank q, all in logical step `step`.
void add_direct_all_gather(LogicalSchedule& ls, int nranks, int rank, Slice mine,
                           const std::vector<Block>& output_blocks, std::size_t step);

}  // namespace twinccl::algo
