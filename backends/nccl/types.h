// TwinCCL's data types and reduce ops in NCCL's terms.
//
//   ncclDataType_t t = to_nccl(DataType::bfloat16);
//   ncclRedOp_t op = create_reduce_op(ReduceOp::premul_sum(0.5), DataType::float32, comm);
//   ... enqueue ...;  destroy_reduce_op(op, comm);   // no-op for built-in ops
#pragma once

#include <nccl.h>

#include "twinccl/data_type.h"
#include "twinccl/reduce_op.h"

namespace twinccl::nccl {

// Throws InvalidArgument for a type this NCCL build lacks (float8 needs NCCL >= 2.24).
ncclDataType_t to_nccl(DataType type);

// Built-in op for sum/prod/min/max/avg; for premul_sum a new op holding this rank's scalar,
// converted to `type` (ncclRedOpCreatePreMulSum, host scalar read at creation).
ncclRedOp_t create_reduce_op(const ReduceOp& op, DataType type, ncclComm_t comm);
// Destroys an op made by ncclRedOpCreatePreMulSum; ignores built-in ones.
void destroy_reduce_op(ncclRedOp_t op, ncclComm_t comm);

}  // namespace twinccl::nccl
