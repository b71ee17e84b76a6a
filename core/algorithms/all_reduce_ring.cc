// Ring all-reduce: a ring reduce-scatter followed by a ring all-gather (2(n-1) steps).
//
// How it works, 4 ranks, data split in chunks A B C D (ring_chunk), ring 0 -> 1 -> 2 -> 3 -> 0.
// Reduce-scatter: at step s rank r sends chunk (r-1-s) and folds chunk (r-2-s) arriving from
// r-1 with its own contribution: dst = received (op) mine. Chunk c starts at rank c+1 and ends,
// complete, at rank c:
//   step 0: 1 sends A(x1) -> 2: A = x1+x2     step 1: 2 sends A -> 3: A = x1+x2+x3
//   step 2: 3 sends A -> 0: A = ((x1+x2)+x3)+x0, final at rank 0 (finalize: integer avg)
// so chunk c is folded x[c+1], x[c+2], ..., x[c] (ring_fold_rank), the order the emulator's fast
// path reproduces bit for bit. All-gather: n-1 more steps, rank r sends chunk (r-s) and receives
// chunk (r-1-s) from r-1. Partials live in output at the chunk's place, so in place works: each
// input chunk is read exactly once, before the same place of output is written.
#include "algorithms/ring.h"

namespace twinccl::algo {

RingPosition whole_world_ring(int nranks, int rank) {
  RingPosition ring;
  ring.members.resize(static_cast<std::size_t>(nranks));
  for (int i = 0; i < nranks; ++i) ring.members[static_cast<std::size_t>(i)] = i;
  ring.me = rank;
  return ring;
}

namespace {

Block chunk_block(ElementRange range, int size, int chunk) {
  const ElementRange c = ring_chunk(range.size(), size, chunk);
  return {range.begin + c.begin, c.size()};
}

}  // namespace

void add_ring_reduce_scatter_chunks(LogicalSchedule& ls, const RingPosition& ring,
                                    ElementRange range, BufferKind source, bool finalize,
                                    std::size_t first_step) {
  const int m = ring.size();
  for (int s = 0; s + 1 < m; ++s) {
    const std::size_t step = first_step + static_cast<std::size_t>(s);
    const Block give = chunk_block(range, m, wrap(ring.me - 1 - s, m));
    ls.add(step, send_op(ring.next(), slice_of(s == 0 ? source : BufferKind::output, give)));
    const Block fold = chunk_block(range, m, wrap(ring.me - 2 - s, m));
    ls.add(step, recv_reduce_op(ring.prev(), slice_of(source, fold),
                                slice_of(BufferKind::output, fold), finalize && s == m - 2));
  }
}

void add_ring_all_gather_chunks(LogicalSchedule& ls, const RingPosition& ring, ElementRange range,
                                std::size_t first_step) {
  const int m = ring.size();
  for (int s = 0; s + 1 < m; ++s) {
    const std::size_t step = first_step + static_cast<std::size_t>(s);
    ls.add(step, send_op(ring.next(), slice_of(BufferKind::output,
                                               chunk_block(range, m, wrap(ring.me - s, m)))));
    ls.add(step, recv_op(ring.prev(), slice_of(BufferKind::output,
                                               chunk_block(range, m, wrap(ring.me - 1 - s, m)))));
  }
}

RankSchedule all_reduce_ring(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  LogicalSchedule ls;
  const int n = spec.nranks;
  if (n == 1) {
    add_local_copy(ls, spec, in(0, spec.count), out(0, spec.count));
  } else {
    const RingPosition ring = whole_world_ring(n, rank);
    const ElementRange all{0, spec.count};
    add_ring_reduce_scatter_chunks(ls, ring, all, BufferKind::input, true, 0);
    add_ring_all_gather_chunks(ls, ring, all, static_cast<std::size_t>(n - 1));
  }
  return ls.lower(params, Pipelining::overlapped);
}

}  // namespace twinccl::algo
