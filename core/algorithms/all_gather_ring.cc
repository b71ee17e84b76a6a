// Ring all-gather (and all_gather_v): n-1 steps.
//
// How it works, 4 ranks, each contributing one block (A at 0, B at 1, C at 2, D at 3):
//   step 0: every rank copies its block into its output and sends it to r+1
//           0: A . . D    1: A B . .    2: . B C .    3: . . C D
//   step s: rank r forwards block (r-s), received the step before, and receives (r-1-s)
//   after step 2 every rank holds A B C D.
// Step 0 sends from the input (the copy writes output in the same step); later steps send from
// output. In place (input = output + r*count) the copy is the same memory, a no-op.
#include "algorithms/ring.h"

namespace twinccl::algo {

RankSchedule all_gather_ring(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  const int n = spec.nranks;
  const std::vector<Block> blocks = big_buffer_blocks(spec);
  const auto block = [&](int c) { return blocks[static_cast<std::size_t>(wrap(c, n))]; };
  const Block mine = block(rank);
  LogicalSchedule ls;
  ls.add(0, copy_op(in(0, mine.count), slice_of(BufferKind::output, mine)));
  const RingPosition ring = whole_world_ring(n, rank);
  for (int s = 0; s + 1 < n; ++s) {
    const auto step = static_cast<std::size_t>(s);
    const Slice give = s == 0 ? in(0, mine.count) : slice_of(BufferKind::output, block(rank - s));
    ls.add(step, send_op(ring.next(), give));
    ls.add(step, recv_op(ring.prev(), slice_of(BufferKind::output, block(rank - 1 - s))));
  }
  return ls.lower(params, Pipelining::overlapped);
}

}  // namespace twinccl::algo
