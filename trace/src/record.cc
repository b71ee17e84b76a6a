// The record of one call (trace.h): what the file keeps of the API's OpDesc.
#include "twinccl/trace/trace.h"

namespace twinccl::trace {
namespace {

// Uneven variants: the per-rank counts that say how much each rank moves.
std::vector<std::size_t> recorded_counts(const OpDesc& op) {
  switch (op.kind) {
    case OpKind::all_gather_v:
    case OpKind::gather_v:
    case OpKind::reduce_scatter_v:
      return op.recv_counts;
    case OpKind::scatter_v:
    case OpKind::all_to_all_v:
      return op.send_counts;  // all_to_all_v: this rank's row
    default:
      return {};
  }
}

}  // namespace

TraceOp record_of(const OpDesc& op) {
  TraceOp r;
  r.kind = op.kind;
  r.count = op.count;
  r.dtype = op.dtype;
  r.root = is_rooted(op.kind) ? op.root : -1;
  r.peer = is_p2p(op.kind) ? op.peer : -1;
  r.counts = recorded_counts(op);
  r.algorithm = op.algorithm;
  r.async = op.async_op;
  return r;
}

}  // namespace twinccl::trace
