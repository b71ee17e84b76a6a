// Private: the ring building blocks the ring schedules (and hierarchical) are composed of.
// A ring is a list of ranks `members`; position i sends to position i+1 (mod size).
#pragma once

#include <cstddef>
#include <vector>

#include "algorithms/schedule_builder.h"
#include "twinccl/algorithms.h"

namespace twinccl::algo {

struct RingPosition {
  std::vector<int> members;  // ring order
  int me = 0;                // this rank's index in members
  int size() const { return static_cast<int>(members.size()); }
  int next() const { return members[static_cast<std::size_t>(wrap(me + 1, size()))]; }
  int prev() const { return members[static_cast<std::size_t>(wrap(me - 1, size()))]; }
};

// Ring reduce-scatter of `range` (elements, same offsets in input and output) split into
// ring_chunk(range, size, c): takes size-1 logical steps from first_step. At step s position i
// sends chunk (i-1-s) and folds chunk (i-2-s) received from position i-1 with its own
// contribution read from `source` (input: loaded, or output: a partial already there); partials
// and results live in output at the chunk's place. Position i ends with chunk i complete; the
// last fold carries `finalize`.
void add_ring_reduce_scatter_chunks(LogicalSchedule& ls, const RingPosition& ring,
                                    ElementRange range, BufferKind source, bool finalize,
                                    std::size_t first_step);

// Ring all-gather of the chunks of `range` in output, position i starting with chunk i:
// size-1 logical steps; at step s position i sends chunk (i-s) and receives chunk (i-1-s).
void add_ring_all_gather_chunks(LogicalSchedule& ls, const RingPosition& ring, ElementRange range,
                                std::size_t first_step);

RingPosition whole_world_ring(int nranks, int rank);

RankSchedule all_reduce_ring(const CollectiveSpec& spec, const AlgorithmParams& params, int rank);
RankSchedule reduce_scatter_ring(const CollectiveSpec& spec, const AlgorithmParams& params,
                                 int rank);
RankSchedule all_gather_ring(const CollectiveSpec& spec, const AlgorithmParams& params, int rank);
RankSchedule broadcast_ring(const CollectiveSpec& spec, const AlgorithmParams& params, int rank);
RankSchedule reduce_ring(const CollectiveSpec& spec, const AlgorithmParams& params, int rank);

}  // namespace twinccl::algo
