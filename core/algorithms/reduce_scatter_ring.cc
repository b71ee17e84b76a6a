// Ring reduce-scatter (and reduce_scatter_v): n-1 steps; block c of the input is rank c's result.
//
// How it works, 4 ranks, input blocks A B C D (block c = rank c's recv_count elements):
// at step s rank r sends block (r-1-s) and folds block (r-2-s) arriving from r-1 with its own
// contribution (dst = received (op) mine), exactly like the first half of the ring all-reduce:
//   step 0: 1 sends A(x1) -> 2          A = x1+x2        (partial in 2's scratch)
//   step 1: 2 sends A -> 3              A = x1+x2+x3     (3's scratch)
//   step 2: 3 sends A -> 0              A = x1+x2+x3+x0  written to 0's output, finalized
// Fold order of block c: x[c+1], x[c+2], ..., x[c]. Partials live in scratch: two slots of one
// block, used alternately (step s writes slot s%2 while slot (s-1)%2 is being sent) when blocks
// are equal; one slot per step when they differ (reduce_scatter_v), so that pipelined pieces of
// different-size blocks never overlap. In place (output = input + r*count) is safe: rank r reads
// its own input block only in its last fold, which writes the same place.
#include "algorithms/ring.h"

namespace twinccl::algo {

RankSchedule reduce_scatter_ring(const CollectiveSpec& spec, const AlgorithmParams& params,
                                 int rank) {
  const int n = spec.nranks;
  const std::vector<Block> blocks = big_buffer_blocks(spec);
  const auto block = [&](int c) { return blocks[static_cast<std::size_t>(wrap(c, n))]; };
  const Block mine = block(rank);
  LogicalSchedule ls;
  if (n == 1) {
    add_local_copy(ls, spec, slice_of(BufferKind::input, mine), out(0, mine.count));
    return ls.lower(params, Pipelining::overlapped);
  }
  bool equal = true;
  std::size_t largest = 0;
  for (const Block& b : blocks) {
    equal = equal && b.count == blocks[0].count;
    largest = std::max(largest, b.count);
  }
  // Where the partial received at step s lives (the last one goes to output).
  std::vector<Block> partial(static_cast<std::size_t>(n - 1));
  std::size_t scratch_used = 0;
  for (int s = 0; s + 2 < n; ++s) {
    const std::size_t size = block(rank - 2 - s).count;
    if (equal) {
      partial[static_cast<std::size_t>(s)] = {static_cast<std::size_t>(s % 2) * largest, size};
      scratch_used = std::max(scratch_used, partial[static_cast<std::size_t>(s)].offset + size);
    } else {
      partial[static_cast<std::size_t>(s)] = {scratch_used, size};
      scratch_used += size;
    }
  }
  ls.need_scratch(scratch_used);
  const RingPosition ring = whole_world_ring(n, rank);
  for (int s = 0; s + 1 < n; ++s) {
    const auto step = static_cast<std::size_t>(s);
    const Slice give = s == 0 ? slice_of(BufferKind::input, block(rank - 1))
                              : slice_of(BufferKind::scratch, partial[step - 1]);
    ls.add(step, send_op(ring.next(), give));
    const bool last = s == n - 2;
    const Slice dst = last ? out(0, mine.count) : slice_of(BufferKind::scratch, partial[step]);
    ls.add(step, recv_reduce_op(ring.prev(), slice_of(BufferKind::input, block(rank - 2 - s)), dst,
                                last));
  }
  return ls.lower(params, Pipelining::overlapped);
}

}  // namespace twinccl::algo
