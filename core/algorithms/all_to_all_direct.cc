// Direct all-to-all (and all_to_all_v): one step.
//
// How it works, 4 ranks; rank r's input holds one block per destination (r0 r1 r2 r3):
//   rank 1: copy 1's block 1 -> output block 1; send block 2 -> 2, 3 -> 3, 0 -> 0;
//           receive block 1 of rank 2 into output block 2, of rank 3 into 3, of rank 0 into 0.
// Peers are visited in the order r+1, r+2, ... (sends) and r-1, r-2, ... (receives) so that in
// a timed run not everyone talks to rank 0 first.
#include "algorithms/direct.h"
#include "twinccl/op_traits.h"

namespace twinccl::algo {
namespace {

// Rank `rank`'s send blocks (per destination) and recv blocks (per source).
void blocks_of(const CollectiveSpec& spec, int rank, std::vector<Block>& send,
               std::vector<Block>& recv) {
  if (spec.kind == OpKind::all_to_all) {
    send = even_blocks(spec.nranks, spec.count);
    recv = send;
    return;
  }
  const PeerCounts sent = matrix_side(spec, rank, Side::input);
  const PeerCounts received = matrix_side(spec, rank, Side::output);
  send = uneven_blocks(sent.counts, sent.displs);
  recv = uneven_blocks(received.counts, received.displs);
}

}  // namespace

RankSchedule all_to_all_direct(const CollectiveSpec& spec, const AlgorithmParams& params,
                               int rank) {
  const int n = spec.nranks;
  std::vector<Block> send, recv;
  blocks_of(spec, rank, send, recv);
  LogicalSchedule ls;
  const auto me = static_cast<std::size_t>(rank);
  ls.add(0, copy_op(slice_of(BufferKind::input, send[me]), slice_of(BufferKind::output, recv[me])));
  for (int d = 1; d < n; ++d) {
    const int to = wrap(rank + d, n);
    ls.add(0, send_op(to, slice_of(BufferKind::input, send[static_cast<std::size_t>(to)])));
  }
  for (int d = 1; d < n; ++d) {
    const int from = wrap(rank - d, n);
    ls.add(0, recv_op(from, slice_of(BufferKind::output, recv[static_cast<std::size_t>(from)])));
  }
  return ls.lower(params, Pipelining::overlapped);
}

}  // namespace twinccl::algo
