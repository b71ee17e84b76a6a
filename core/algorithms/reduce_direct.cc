// Direct reduce-scatter (and reduce_scatter_v) and direct reduce: exchange in one step, then
// fold locally in ring order, one fold per step (each fold reads the previous one's result).
//
// How it works, 4 ranks, reduce-scatter, rank 1 (blocks A B C D, rank 1 owns B):
//   step 0: send A -> 0, C -> 2, D -> 3; receive B of ranks 2, 3, 0 into scratch slots 0, 1, 2
//   step 1: acc = B2 (op) B3        step 2: acc = acc (op) B0
//   step 3: output = acc (op) B1 (own input, loaded), finalize
// so block p is folded x[p+1], x[p+2], ..., x[p]: the ring's order, bit for bit.
// Reduce (root p) is the same with the whole buffer as p's block and non-roots only sending.
#include "algorithms/direct.h"

namespace twinccl::algo {
namespace {

// Receives block `mine` from every other rank and folds; `own` is this rank's contribution.
std::size_t add_receive_and_fold(LogicalSchedule& ls, int n, int rank, std::size_t size, Slice own,
                                 Slice result, std::size_t first_step) {
  if (n == 1) {
    ls.add(first_step, copy_op(own, result, true));
    return 1;
  }
  // Slot j holds the block of rank (rank+1+j).
  ls.need_scratch(static_cast<std::size_t>(n - 1) * size);
  const auto slot = [&](int j) { return scratch(static_cast<std::size_t>(j) * size, size); };
  for (int j = 0; j + 1 < n; ++j) ls.add(first_step, recv_op(wrap(rank + 1 + j, n), slot(j)));
  for (int k = 1; k < n; ++k) {
    const bool last = k == n - 1;
    ls.add(first_step + static_cast<std::size_t>(k),
           reduce_op(slot(0), last ? own : slot(k), last ? result : slot(0), last));
  }
  return static_cast<std::size_t>(n);
}

}  // namespace

std::size_t add_direct_reduce_scatter(LogicalSchedule& ls, int nranks, int rank,
                                      const std::vector<Block>& input_blocks, Slice result,
                                      std::size_t first_step) {
  for (int d = 1; d < nranks; ++d) {
    const int to = wrap(rank + d, nranks);
    ls.add(first_step,
           send_op(to, slice_of(BufferKind::input, input_blocks[static_cast<std::size_t>(to)])));
  }
  const Block mine = input_blocks[static_cast<std::size_t>(rank)];
  return add_receive_and_fold(ls, nranks, rank, mine.count, slice_of(BufferKind::input, mine),
                              result, first_step);
}

RankSchedule reduce_scatter_direct(const CollectiveSpec& spec, const AlgorithmParams& params,
                                   int rank) {
  const std::vector<Block> blocks = big_buffer_blocks(spec);
  LogicalSchedule ls;
  add_direct_reduce_scatter(ls, spec.nranks, rank, blocks,
                            out(0, blocks[static_cast<std::size_t>(rank)].count), 0);
  return ls.lower(params, Pipelining::overlapped);
}

RankSchedule reduce_direct(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  LogicalSchedule ls;
  if (rank != spec.root) {
    ls.add(0, send_op(spec.root, in(0, spec.count)));
  } else {
    add_receive_and_fold(ls, spec.nranks, rank, spec.count, in(0, spec.count), out(0, spec.count),
                         0);
  }
  return ls.lower(params, Pipelining::overlapped);
}

}  // namespace twinccl::algo
