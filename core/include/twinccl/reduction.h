// How one reducing collective combines its ranks' contributions: the single place where
// sum/prod/min/max/avg/premul_sum semantics live (emulator data paths, reference model, checks).
//
//   Reduction r = Reduction::make(DataType::float16, ops_of_every_rank);
//   r.load(rank, tmp, input, n);      // input as contributed (premul/avg scaling applied)
//   r.combine(acc, acc, tmp, n);      // acc = acc (op) tmp, rounded to float16
//   r.finalize(acc, n);               // integer avg: divide by nranks
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "twinccl/data_type.h"
#include "twinccl/reduce_op.h"

namespace twinccl {

struct Reduction {
  DataType dtype = DataType::float32;
  ReduceKind combine_op = ReduceKind::sum;  // sum, prod, min or max
  std::vector<double> input_scale;          // per rank; empty = inputs used as they are
  std::int64_t post_divisor = 0;            // integer avg: final result divided by it; 0 = none

  // Builds the reduction for `ops[r]` passed by rank r (all of one kind; premul_sum scalars may
  // differ per rank). Float avg becomes premul_sum with 1/nranks; integer avg a post-division.
  // Throws InvalidArgument for an op the dtype does not support (non-integral premul scalar on an
  // integer type) and MismatchError when kinds differ.
  static Reduction make(DataType dtype, std::span<const ReduceOp> ops);

  bool scales_inputs() const { return !input_scale.empty(); }
  bool has_finalize() const { return post_divisor != 0; }
  // dst = rank's contribution read from its input (scaled when needed). dst may equal src.
  void load(int rank, void* dst, const void* src, std::size_t count) const;
  // dst = a (op) b, rounded to the storage type.
  void combine(void* dst, const void* a, const void* b, std::size_t count) const;
  // Post-division for integer avg; no-op otherwise.
  void finalize(void* data, std::size_t count) const;
};

// The reduce-op check one rank can do alone (premul_sum scalar integral for integer types,
// finite; enum in range). Throws InvalidArgument with the reason.
void check_reduce_op_supported(DataType dtype, const ReduceOp& op);

}  // namespace twinccl
