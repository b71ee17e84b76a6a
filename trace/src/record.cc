// The record of one call (trace.h): what the file keeps of the API's OpDesc, and back.
#include "twinccl/op_traits.h"
#include "twinccl/trace/trace.h"

namespace twinccl::trace {

TraceOp record_of(const OpDesc& op) {
  TraceOp r;
  r.kind = op.kind;
  r.count = op.count;
  r.dtype = op.dtype;
  r.root = is_rooted(op.kind) ? op.root : -1;
  r.peer = is_p2p(op.kind) ? op.peer : -1;
  // Uneven variants: the per-rank counts that say how much each rank moves (all_to_all_v: this
  // rank's send_counts, its row).
  if (is_uneven(op.kind)) r.counts = block_vectors(op, Side::input).counts;
  r.algorithm = op.algorithm;
  r.async = op.async_op;
  return r;
}

OpDesc desc_of(const TraceOp& r) {
  OpDesc op;
  op.kind = r.kind;
  op.count = r.count;
  op.dtype = r.dtype;
  op.root = r.root;
  op.peer = r.peer;
  if (is_uneven(r.kind)) {  // back where record_of found them
    (traits(r.kind).counts == CountsIn::recv_counts ? op.recv_counts : op.send_counts) = r.counts;
  }
  op.algorithm = r.algorithm;
  op.async_op = r.async;
  return op;
}

std::string op_label(const Trace& trace, const TraceOp& op) {
  return std::string(name(op.kind)) + " #" + std::to_string(op.seq) + " on comm '" +
         trace.communicators[static_cast<std::size_t>(op.comm)].name + "'";
}

}  // namespace twinccl::trace
