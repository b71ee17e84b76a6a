// nccl-tests' bandwidth arithmetic (perf_math.h), from the collectives' table (op_traits.h).
#include "twinccl/perf_math.h"

#include "twinccl/op_traits.h"

namespace twinccl {

bool size_counts_all_ranks(OpKind kind) { return traits(kind).size_counts_all_ranks; }

double algbw_bytes(OpKind kind, std::size_t count, DataType dtype, int nranks) {
  double bytes = static_cast<double>(count) * static_cast<double>(size_of(dtype));
  return size_counts_all_ranks(kind) ? bytes * nranks : bytes;
}

double busbw_factor(OpKind kind, int nranks) { return traits(kind).busbw_factor(nranks); }

}  // namespace twinccl
