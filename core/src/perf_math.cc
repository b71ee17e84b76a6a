#include "twinccl/perf_math.h"

namespace twinccl {

bool size_counts_all_ranks(OpKind kind) {
  switch (kind) {
    case OpKind::reduce_scatter:
    case OpKind::all_gather:
    case OpKind::all_to_all:
    case OpKind::gather:
    case OpKind::scatter:
    case OpKind::reduce_scatter_v:
    case OpKind::all_gather_v:
    case OpKind::all_to_all_v:
    case OpKind::gather_v:
    case OpKind::scatter_v:
      return true;
    default:
      return false;
  }
}

double algbw_bytes(OpKind kind, std::size_t count, DataType dtype, int nranks) {
  double bytes = static_cast<double>(count) * static_cast<double>(size_of(dtype));
  return size_counts_all_ranks(kind) ? bytes * nranks : bytes;
}

double busbw_factor(OpKind kind, int nranks) {
  double n = nranks;
  if (nranks <= 0) return 0.0;
  switch (kind) {
    case OpKind::all_reduce:
      return 2.0 * (n - 1.0) / n;
    case OpKind::reduce_scatter:
    case OpKind::all_gather:
    case OpKind::all_to_all:
    case OpKind::reduce_scatter_v:
    case OpKind::all_gather_v:
    case OpKind::all_to_all_v:
      return (n - 1.0) / n;
    default:
      return 1.0;
  }
}

}  // namespace twinccl
