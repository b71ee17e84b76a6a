// The even collectives and send/recv on NCCL (see collectives.h).
//
// How it works: each OpKind maps to one NCCL call with NCCL's own counts (TwinCCL's counts are
// NCCL's). barrier is an all_reduce of one int32 on scratch device memory. all_to_all, gather and
// scatter are ncclAlltoAll/ncclGather/ncclScatter when the loaded NCCL has them (>= 2.28.3, see
// loader.h); before that they become the grouped send/recv forms of uneven.cc with equal counts.
// The _v variants go to uneven.cc.
#include "nccl/collectives.h"

#include <numeric>
#include <optional>

#include "nccl/check.h"
#include "nccl/internal_group.h"
#include "nccl/one_rank.h"
#include "nccl/types.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {
namespace {

std::vector<std::size_t> same_counts(std::size_t count, int nranks) {
  return std::vector<std::size_t>(static_cast<std::size_t>(nranks), count);
}

const void* at(const void* p, std::size_t elements, DataType t) {
  return static_cast<const char*>(p) + elements * size_of(t);
}
void* at(void* p, std::size_t elements, DataType t) {
  return static_cast<char*>(p) + elements * size_of(t);
}

}  // namespace

std::string describe(const OpDesc& op, const EnqueueTarget& t) {
  return call_site_text(std::string(name(op.kind)) + " #" + std::to_string(t.op_number),
                        t.comm_name ? *t.comm_name : std::string("?"), t.rank, op.where);
}

void enqueue(const OpDesc& op, const EnqueueTarget& t, void* barrier_scratch,
             std::vector<ncclRedOp_t>& reduce_ops) {
  auto what = [&] { return describe(op, t); };
  const ncclComm_t comm = t.comm;
  const cudaStream_t stream = t.stream;
  auto reduce_op = [&] {
    ncclRedOp_t created = create_reduce_op(op.op, op.dtype, comm);
    reduce_ops.push_back(created);
    return created;
  };
  // Every rank passes the same count to an even collective (and both sides of a send/recv the
  // same count), so skipping empty calls is consistent across ranks and spares NCCL null buffers.
  if (op.count == 0 && op.kind != OpKind::barrier && !is_uneven(op.kind)) return;
  switch (op.kind) {
    case OpKind::all_reduce:
    case OpKind::reduce_scatter:
    case OpKind::reduce: {
      // One rank: pieces NCCL's one-rank kernel writes completely (one_rank.h); else one call.
      const ncclRedOp_t red = reduce_op();
      const std::vector<OnePiece> pieces =
          one_rank_pieces(op.count, size_of(op.dtype), uses_one_rank_kernel(op, t.size));
      std::optional<InternalGroup> group;  // several calls: one group (non-blocking comm)
      if (pieces.size() > 1) group.emplace(t, op);
      for (const OnePiece& p : pieces) {
        const void* send = at(op.send, p.first, op.dtype);
        void* recv = op.recv == nullptr ? nullptr : at(op.recv, p.first, op.dtype);
        const ncclDataType_t type = to_nccl(op.dtype);
        check_nccl_lazy(
            op.kind == OpKind::all_reduce
                ? api().ncclAllReduce(send, recv, p.count, type, red, comm, stream)
            : op.kind == OpKind::reduce_scatter
                ? api().ncclReduceScatter(send, recv, p.count, type, red, comm, stream)
                : api().ncclReduce(send, recv, p.count, type, red, op.root, comm, stream),
            comm, what);
      }
      if (group) group->end();
      return;
    }
    case OpKind::all_gather:
      return check_nccl_lazy(
          api().ncclAllGather(op.send, op.recv, op.count, to_nccl(op.dtype), comm, stream), comm,
          what);
    case OpKind::broadcast:
      return check_nccl_lazy(
          api().ncclBroadcast(op.send, op.recv, op.count, to_nccl(op.dtype), op.root, comm, stream),
          comm, what);
    case OpKind::send:
      return check_nccl_lazy(
          api().ncclSend(op.send, op.count, to_nccl(op.dtype), op.peer, comm, stream), comm, what);
    case OpKind::recv:
      return check_nccl_lazy(
          api().ncclRecv(op.recv, op.count, to_nccl(op.dtype), op.peer, comm, stream), comm, what);
    case OpKind::barrier:
      return check_nccl_lazy(api().ncclAllReduce(barrier_scratch, barrier_scratch, 1, ncclInt32,
                                                 ncclSum, comm, stream),
                             comm, what);
    case OpKind::all_to_all:
      if (api().ncclAlltoAll == nullptr) {  // NCCL < 2.28.3: grouped send/recv
        const auto counts = same_counts(op.count, t.size);
        return enqueue_all_to_all_v(op.send, counts, {}, op.recv, counts, {}, op.dtype, t, op);
      }
      return check_nccl_lazy(
          api().ncclAlltoAll(op.send, op.recv, op.count, to_nccl(op.dtype), comm, stream), comm,
          what);
    case OpKind::gather:
      if (api().ncclGather == nullptr) {
        return enqueue_gather_v(op.send, op.recv, same_counts(op.count, t.size), {}, op.dtype,
                                op.root, t, op);
      }
      return check_nccl_lazy(
          api().ncclGather(op.send, op.recv, op.count, to_nccl(op.dtype), op.root, comm, stream),
          comm, what);
    case OpKind::scatter:
      if (api().ncclScatter == nullptr) {
        return enqueue_scatter_v(op.send, op.recv, same_counts(op.count, t.size), {}, op.dtype,
                                 op.root, t, op);
      }
      return check_nccl_lazy(
          api().ncclScatter(op.send, op.recv, op.count, to_nccl(op.dtype), op.root, comm, stream),
          comm, what);
    case OpKind::all_gather_v:
      return enqueue_all_gather_v(op.send, op.recv, op.recv_counts, op.recv_displs, op.dtype, t,
                                  op);
    case OpKind::reduce_scatter_v:
      return enqueue_reduce_scatter_v(op.send, op.recv, op.recv_counts, op.send_displs, op.dtype,
                                      reduce_op(), t, op);
    case OpKind::all_to_all_v:
      return enqueue_all_to_all_v(op.send, op.send_counts, op.send_displs, op.recv, op.recv_counts,
                                  op.recv_displs, op.dtype, t, op);
    case OpKind::gather_v:
      return enqueue_gather_v(op.send, op.recv, op.recv_counts, op.recv_displs, op.dtype, op.root,
                              t, op);
    case OpKind::scatter_v:
      return enqueue_scatter_v(op.send, op.recv, op.send_counts, op.send_displs, op.dtype, op.root,
                               t, op);
  }
  throw InternalError(describe(op, t) + ": operation kind " +
                      std::to_string(static_cast<int>(op.kind)) + " has no NCCL mapping");
}

}  // namespace twinccl::nccl
