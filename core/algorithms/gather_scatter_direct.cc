// Direct gather, scatter (and their _v forms) and broadcast: the root talks to every rank in
// one step.
//
// How it works, 4 ranks, root 0:
//   gather:    1, 2, 3 send their input to 0; 0 copies its own block and receives block q from q.
//   scatter:   0 copies block 0 to its output and sends block q of its input to q.
//   broadcast: 0 copies input to output and sends its input to 1, 2, 3.
#include "algorithms/direct.h"

namespace twinccl::algo {

RankSchedule gather_direct(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  const int n = spec.nranks;
  const std::vector<Block> blocks = big_buffer_blocks(spec);
  const Block mine = blocks[static_cast<std::size_t>(rank)];
  LogicalSchedule ls;
  if (rank != spec.root) {
    ls.add(0, send_op(spec.root, in(0, mine.count)));
    return ls.lower(params, Pipelining::overlapped);
  }
  ls.add(0, copy_op(in(0, mine.count), slice_of(BufferKind::output, mine)));
  for (int d = 1; d < n; ++d) {
    const int from = wrap(rank + d, n);
    ls.add(0, recv_op(from, slice_of(BufferKind::output, blocks[static_cast<std::size_t>(from)])));
  }
  return ls.lower(params, Pipelining::overlapped);
}

RankSchedule scatter_direct(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  const int n = spec.nranks;
  const std::vector<Block> blocks = big_buffer_blocks(spec);
  const Block mine = blocks[static_cast<std::size_t>(rank)];
  LogicalSchedule ls;
  if (rank != spec.root) {
    ls.add(0, recv_op(spec.root, out(0, mine.count)));
    return ls.lower(params, Pipelining::overlapped);
  }
  ls.add(0, copy_op(slice_of(BufferKind::input, mine), out(0, mine.count)));
  for (int d = 1; d < n; ++d) {
    const int to = wrap(rank + d, n);
    ls.add(0, send_op(to, slice_of(BufferKind::input, blocks[static_cast<std::size_t>(to)])));
  }
  return ls.lower(params, Pipelining::overlapped);
}

RankSchedule broadcast_direct(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  const int n = spec.nranks;
  LogicalSchedule ls;
  if (rank != spec.root) {
    ls.add(0, recv_op(spec.root, out(0, spec.count)));
    return ls.lower(params, Pipelining::overlapped);
  }
  ls.add(0, copy_op(in(0, spec.count), out(0, spec.count)));
  for (int d = 1; d < n; ++d) ls.add(0, send_op(wrap(rank + d, n), in(0, spec.count)));
  return ls.lower(params, Pipelining::overlapped);
}

}  // namespace twinccl::algo
