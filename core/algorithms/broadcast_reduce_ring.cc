// Ring broadcast and ring reduce: a chain around the ring, pipelined piece by piece.
//
// How it works, 4 ranks, root 1:
//   broadcast: 1 -> 2 -> 3 -> 0. The root copies input to output and sends from its input; rank
//              root+k receives at step k-1 into output and forwards it at step k.
//   reduce:    2 -> 3 -> 0 -> 1. Rank root+1 sends its contribution; rank root+k (0 < k < n-1)
//              folds received (op) mine into scratch and forwards it; the root folds last into
//              its output with finalize. Fold order: ring_fold_rank(n, root, k) for k = 0..n-1,
//              i.e. x[root+1], x[root+2], ..., x[root].
// With chunk_elements the pieces flow as a wavefront: n-1 + pieces-1 steps instead of
// (n-1)*pieces.
#include "algorithms/ring.h"

namespace twinccl::algo {

RankSchedule broadcast_ring(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  const int n = spec.nranks;
  const std::size_t count = spec.count;
  const int k = wrap(rank - spec.root, n);  // position in the chain
  LogicalSchedule ls;
  if (k == 0) {
    ls.add(0, copy_op(in(0, count), out(0, count)));
    if (n > 1) ls.add(0, send_op(wrap(rank + 1, n), in(0, count)));
  } else {
    ls.add(static_cast<std::size_t>(k - 1), recv_op(wrap(rank - 1, n), out(0, count)));
    if (k + 1 < n) ls.add(static_cast<std::size_t>(k), send_op(wrap(rank + 1, n), out(0, count)));
  }
  return ls.lower(params, Pipelining::overlapped);
}

RankSchedule reduce_ring(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  const int n = spec.nranks;
  const std::size_t count = spec.count;
  LogicalSchedule ls;
  if (n == 1) {
    add_local_copy(ls, spec, in(0, count), out(0, count));
    return ls.lower(params, Pipelining::overlapped);
  }
  const int k = wrap(rank - spec.root - 1, n);  // fold position: ring_fold_rank(n, root, k)
  const int next = wrap(rank + 1, n);
  const int prev = wrap(rank - 1, n);
  if (k == 0) {
    ls.add(0, send_op(next, in(0, count)));
  } else if (k < n - 1) {
    ls.need_scratch(count);
    ls.add(static_cast<std::size_t>(k - 1), recv_reduce_op(prev, in(0, count), scratch(0, count)));
    ls.add(static_cast<std::size_t>(k), send_op(next, scratch(0, count)));
  } else {
    ls.add(static_cast<std::size_t>(k - 1),
           recv_reduce_op(prev, in(0, count), out(0, count), true));
  }
  return ls.lower(params, Pipelining::overlapped);
}

}  // namespace twinccl::algo
