// The even collectives and send/recv on NCCL (see collectives.h).
//
// How it works: each OpKind maps to one NCCL call with NCCL's own counts (TwinCCL's counts are
// NCCL's). barrier is an all_reduce of one int32 on scratch device memory. all_to_all, gather and
// scatter are ncclAlltoAll/ncclGather/ncclScatter from NCCL 2.28; before that they become the
// grouped send/recv forms of uneven.cc with every count equal. The _v variants go to uneven.cc.
#include <numeric>

#include "nccl/check.h"
#include "nccl/collectives.h"
#include "nccl/types.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {
namespace {

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 28, 0)
std::vector<std::size_t> same_counts(std::size_t count, int nranks) {
  return std::vector<std::size_t>(static_cast<std::size_t>(nranks), count);
}
#endif

}  // namespace

std::string describe(const OpDesc& op, const EnqueueTarget& t) {
  return std::string(name(op.kind)) + " #" + std::to_string(t.op_number) + " on comm '" +
         (t.comm_name ? *t.comm_name : std::string("?")) + "' rank " + std::to_string(t.rank) + " (" +
         describe_call_site(op.where) + ")";
}

void enqueue(const OpDesc& op, const EnqueueTarget& t, void* barrier_scratch, std::vector<ncclRedOp_t>& reduce_ops) {
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
      return check_nccl_lazy(
          ncclAllReduce(op.send, op.recv, op.count, to_nccl(op.dtype), reduce_op(), comm, stream), comm, what);
    case OpKind::reduce_scatter:
      return check_nccl_lazy(
          ncclReduceScatter(op.send, op.recv, op.count, to_nccl(op.dtype), reduce_op(), comm, stream), comm, what);
    case OpKind::all_gather:
      return check_nccl_lazy(ncclAllGather(op.send, op.recv, op.count, to_nccl(op.dtype), comm, stream), comm, what);
    case OpKind::broadcast:
      return check_nccl_lazy(ncclBroadcast(op.send, op.recv, op.count, to_nccl(op.dtype), op.root, comm, stream),
                             comm, what);
    case OpKind::reduce:
      return check_nccl_lazy(
          ncclReduce(op.send, op.recv, op.count, to_nccl(op.dtype), reduce_op(), op.root, comm, stream), comm, what);
    case OpKind::send:
      return check_nccl_lazy(ncclSend(op.send, op.count, to_nccl(op.dtype), op.peer, comm, stream), comm, what);
    case OpKind::recv:
      return check_nccl_lazy(ncclRecv(op.recv, op.count, to_nccl(op.dtype), op.peer, comm, stream), comm, what);
    case OpKind::barrier:
      return check_nccl_lazy(ncclAllReduce(barrier_scratch, barrier_scratch, 1, ncclInt32, ncclSum, comm, stream),
                             comm, what);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    case OpKind::all_to_all:
      return check_nccl_lazy(ncclAlltoAll(op.send, op.recv, op.count, to_nccl(op.dtype), comm, stream), comm, what);
    case OpKind::gather:
      return check_nccl_lazy(ncclGather(op.send, op.recv, op.count, to_nccl(op.dtype), op.root, comm, stream), comm,
                             what);
    case OpKind::scatter:
      return check_nccl_lazy(ncclScatter(op.send, op.recv, op.count, to_nccl(op.dtype), op.root, comm, stream),
                             comm, what);
#else
    case OpKind::all_to_all: {
      const auto counts = same_counts(op.count, t.size);
      return enqueue_all_to_all_v(op.send, counts, {}, op.recv, counts, {}, op.dtype, t, op);
    }
    case OpKind::gather:
      return enqueue_gather_v(op.send, op.recv, same_counts(op.count, t.size), {}, op.dtype, op.root, t, op);
    case OpKind::scatter:
      return enqueue_scatter_v(op.send, op.recv, same_counts(op.count, t.size), {}, op.dtype, op.root, t, op);
#endif
    case OpKind::all_gather_v:
      return enqueue_all_gather_v(op.send, op.recv, op.recv_counts, op.recv_displs, op.dtype, t, op);
    case OpKind::reduce_scatter_v:
      return enqueue_reduce_scatter_v(op.send, op.recv, op.recv_counts, op.send_displs, op.dtype, reduce_op(), t,
                                      op);
    case OpKind::all_to_all_v:
      return enqueue_all_to_all_v(op.send, op.send_counts, op.send_displs, op.recv, op.recv_counts, op.recv_displs,
                                  op.dtype, t, op);
    case OpKind::gather_v:
      return enqueue_gather_v(op.send, op.recv, op.recv_counts.empty() ? op.send_counts : op.recv_counts,
                              op.recv_counts.empty() ? op.send_displs : op.recv_displs, op.dtype, op.root, t, op);
    case OpKind::scatter_v:
      return enqueue_scatter_v(op.send, op.recv, op.send_counts.empty() ? op.recv_counts : op.send_counts,
                               op.send_counts.empty() ? op.recv_displs : op.send_displs, op.dtype, op.root, t, op);
  }
  throw InternalError(describe(op, t) + ": operation kind " + std::to_string(static_cast<int>(op.kind)) +
                      " has no NCCL mapping");
}

}  // namespace twinccl::nccl
