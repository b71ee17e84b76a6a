// Uneven collectives (_v) as grouped point-to-point, and reduce_scatter_v as grouped reduces.
//
// How it works: inside one ncclGroupStart/End every rank posts the ncclSend/ncclRecv pairs of the
// operation, so NCCL runs them all concurrently (no deadlock, whatever the order). A rank's own
// block is a send to itself plus a receive from itself (NCCL copies it), skipped when it is
// already in place. Example, all_gather_v with counts {2,1,3} on rank 1 of 3:
//
//   send 1 element to 0, 1 (self), 2;  recv 2 from 0 at 0, 1 from 1 at 2, 3 from 2 at 3
//
// reduce_scatter_v issues one ncclReduce per block, rooted at the block's owner, in one group:
// NCCL does the reduction itself, so avg, premul_sum and every dtype behave exactly as in
// ncclReduceScatter (no separate reduction kernel here). Blocks of 0 elements are skipped by
// every rank alike (all ranks pass the same counts).
#include "nccl/check.h"
#include "nccl/collectives.h"
#include "nccl/internal_group.h"
#include "nccl/one_rank.h"
#include "nccl/types.h"
#include "twinccl/errors.h"
#include "twinccl/op_traits.h"

namespace twinccl::nccl {
namespace {

std::vector<std::size_t> offsets(std::span<const std::size_t> counts,
                                 std::span<const std::size_t> displs) {
  return displs.empty() ? packed_displs(counts)
                        : std::vector<std::size_t>(displs.begin(), displs.end());
}

struct Transfers {
  const EnqueueTarget& t;
  const OpDesc& op;
  ncclDataType_t type;
  std::size_t element_bytes;

  const char* at(const void* base, std::size_t elements) const {
    return static_cast<const char*>(base) + elements * element_bytes;
  }
  char* at(void* base, std::size_t elements) const {
    return static_cast<char*>(base) + elements * element_bytes;
  }
  void send(const void* base, std::size_t first, std::size_t count, int peer) const {
    if (count == 0) return;
    check_nccl_lazy(api().ncclSend(at(base, first), count, type, peer, t.comm, t.stream), t.comm,
                    [&] {
                      return describe(op, t) + ": ncclSend of " + std::to_string(count) + " to " +
                             std::to_string(peer);
                    });
  }
  void recv(void* base, std::size_t first, std::size_t count, int peer) const {
    if (count == 0) return;
    check_nccl_lazy(api().ncclRecv(at(base, first), count, type, peer, t.comm, t.stream), t.comm,
                    [&] {
                      return describe(op, t) + ": ncclRecv of " + std::to_string(count) + " from " +
                             std::to_string(peer);
                    });
  }
  // This rank's own block: NCCL self send/recv unless it is already where it belongs.
  void self(const void* src_base, std::size_t src_first, void* dst_base, std::size_t dst_first,
            std::size_t count) const {
    if (count == 0 || at(src_base, src_first) == at(dst_base, dst_first)) return;
    send(src_base, src_first, count, t.rank);
    recv(dst_base, dst_first, count, t.rank);
  }
};

Transfers make(const EnqueueTarget& t, const OpDesc& op, DataType dtype) {
  return Transfers{t, op, to_nccl(dtype), size_of(dtype)};
}

}  // namespace

void enqueue_all_to_all_v(const void* send, std::span<const std::size_t> send_counts,
                          std::span<const std::size_t> send_displs, void* recv,
                          std::span<const std::size_t> recv_counts,
                          std::span<const std::size_t> recv_displs, DataType dtype,
                          const EnqueueTarget& t, const OpDesc& op) {
  const Transfers x = make(t, op, dtype);
  const auto sd = offsets(send_counts, send_displs);
  const auto rd = offsets(recv_counts, recv_displs);
  InternalGroup group(t, op);
  for (int p = 0; p < t.size; ++p) {
    const auto i = static_cast<std::size_t>(p);
    if (p == t.rank) {
      x.self(send, sd[i], recv, rd[i], send_counts[i]);
      continue;
    }
    x.send(send, sd[i], send_counts[i], p);
    x.recv(recv, rd[i], recv_counts[i], p);
  }
  group.end();
}

// The other grouped forms are all_to_all_v with some blocks of 0 elements (nothing is sent) and
// every block sent from the start of `send` or received at the start of `recv` (displacement 0).
void enqueue_all_gather_v(const void* send, void* recv, std::span<const std::size_t> counts,
                          std::span<const std::size_t> displs, DataType dtype,
                          const EnqueueTarget& t, const OpDesc& op) {
  const auto n = static_cast<std::size_t>(t.size);
  const std::vector<std::size_t> mine_to_all(n, counts[static_cast<std::size_t>(t.rank)]), at_0(n);
  enqueue_all_to_all_v(send, mine_to_all, at_0, recv, counts, displs, dtype, t, op);
}

void enqueue_gather_v(const void* send, void* recv, std::span<const std::size_t> counts,
                      std::span<const std::size_t> displs, DataType dtype, int root,
                      const EnqueueTarget& t, const OpDesc& op) {
  const auto n = static_cast<std::size_t>(t.size);
  std::vector<std::size_t> mine_to_root(n), none(n);
  mine_to_root[static_cast<std::size_t>(root)] = counts[static_cast<std::size_t>(t.rank)];
  const std::span<const std::size_t> received = t.rank == root ? counts : none;
  enqueue_all_to_all_v(send, mine_to_root, none, recv, received, displs, dtype, t, op);
}

void enqueue_scatter_v(const void* send, void* recv, std::span<const std::size_t> counts,
                       std::span<const std::size_t> displs, DataType dtype, int root,
                       const EnqueueTarget& t, const OpDesc& op) {
  const auto n = static_cast<std::size_t>(t.size);
  std::vector<std::size_t> mine_from_root(n), none(n);
  mine_from_root[static_cast<std::size_t>(root)] = counts[static_cast<std::size_t>(t.rank)];
  const std::span<const std::size_t> sent = t.rank == root ? counts : none;
  enqueue_all_to_all_v(send, sent, displs, recv, mine_from_root, none, dtype, t, op);
}

void enqueue_reduce_scatter_v(const void* send, void* recv, std::span<const std::size_t> counts,
                              std::span<const std::size_t> displs, DataType dtype,
                              ncclRedOp_t reduce_op, const EnqueueTarget& t, const OpDesc& op) {
  const Transfers x = make(t, op, dtype);
  const auto d = offsets(counts, displs);
  InternalGroup group(t, op);
  for (int p = 0; p < t.size; ++p) {
    const auto i = static_cast<std::size_t>(p);
    if (counts[i] == 0) continue;
    // One rank: pieces NCCL's one-rank kernel writes completely (one_rank.h).
    for (const OnePiece& piece :
         one_rank_pieces(counts[i], size_of(dtype), uses_one_rank_kernel(op, t.size))) {
      // recvbuff is only used at the root
      void* block_recv = p == t.rank ? x.at(recv, piece.first) : nullptr;
      check_nccl_lazy(
          api().ncclReduce(x.at(send, d[i] + piece.first), block_recv, piece.count, x.type,
                           reduce_op, p, t.comm, t.stream),
          t.comm, [&] { return describe(op, t) + ": ncclReduce of block " + std::to_string(p); });
    }
  }
  group.end();
}

}  // namespace twinccl::nccl
