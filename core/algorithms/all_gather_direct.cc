// Direct all-gather (and all_gather_v): one step.
//
// How it works, 4 ranks: rank r copies its input into output block r, sends its input to every
// other rank and receives block q from every rank q:
//   rank 1: copy -> block 1; send -> 2, 3, 0; receive 0 -> block 0, 3 -> block 3, 2 -> block 2.
// In place (input = output block r) the copy is the same memory and the sends read it unchanged.
#include "algorithms/direct.h"

namespace twinccl::algo {

void add_direct_all_gather(LogicalSchedule& ls, int nranks, int rank, Slice mine,
                           const std::vector<Block>& output_blocks, std::size_t step) {
  for (int d = 1; d < nranks; ++d) ls.add(step, send_op(wrap(rank + d, nranks), mine));
  for (int d = 1; d < nranks; ++d) {
    const int from = wrap(rank - d, nranks);
    ls.add(step, recv_op(from, slice_of(BufferKind::output,
                                        output_blocks[static_cast<std::size_t>(from)])));
  }
}

RankSchedule all_gather_direct(const CollectiveSpec& spec, const AlgorithmParams& params,
                               int rank) {
  const std::vector<Block> blocks = big_buffer_blocks(spec);
  const Block mine = blocks[static_cast<std::size_t>(rank)];
  LogicalSchedule ls;
  ls.add(0, copy_op(in(0, mine.count), slice_of(BufferKind::output, mine)));
  add_direct_all_gather(ls, spec.nranks, rank, in(0, mine.count), blocks, 0);
  return ls.lower(params, Pipelining::overlapped);
}

}  // namespace twinccl::algo
