// Reduction: turns the ops every rank passed into one combine op plus per-rank input scaling and
// an optional post-division; the single place where avg and premul_sum semantics live.
//
// How it works (NCCL's semantics), 4 ranks:
//   sum/prod/min/max      combine_op = that op, inputs used as they are
//   avg, float types      combine_op = sum, input_scale = {0.25, 0.25, 0.25, 0.25}
//   avg, integer types    combine_op = sum, post_divisor = 4 (truncates toward zero at the end)
//   premul_sum(s_r)       combine_op = sum, input_scale = {s_0, s_1, s_2, s_3}
// A reducing collective then does: load every contribution (scaled and rounded to the storage
// type), combine them in its algorithm's order, and finalize the result once.
#include "twinccl/reduction.h"

#include <cmath>
#include <cstring>
#include <string>

#include "kernels_text.h"
#include "twinccl/errors.h"
#include "twinccl/reduce_kernels.h"

namespace twinccl {
namespace {

// Inclusive range of an integer type, as doubles (both ends exact: powers of two or zero, with
// the upper end exclusive for the 64-bit types where 2^63 - 1 and 2^64 - 1 are not doubles).
struct IntegerRange {
  double lowest;
  double upper;
  bool upper_inclusive;
};

IntegerRange integer_range(DataType dtype) {
  switch (dtype) {
    case DataType::int8:
      return {-128.0, 127.0, true};
    case DataType::uint8:
      return {0.0, 255.0, true};
    case DataType::int32:
      return {-2147483648.0, 2147483647.0, true};
    case DataType::uint32:
      return {0.0, 4294967295.0, true};
    case DataType::int64:
      return {-9223372036854775808.0, 9223372036854775808.0, false};
    case DataType::uint64:
      return {0.0, 18446744073709551616.0, false};
    default:
      break;
  }
  throw InternalError("integer_range: " + std::string(name(dtype)) + " is not an integer type");
}

void require_valid_dtype(DataType dtype) {
  if (!is_valid(dtype)) {
    throw InvalidArgument("data type value " + detail::raw_value_text(dtype) +
                          " is not a DataType");
  }
}

// "reduce op value 42 is not a ReduceOp (sum, prod, min, max, avg, premul_sum)"
std::string not_a_reduce_op(ReduceKind kind) {
  return "reduce op value " + detail::raw_value_text(kind) +
         " is not a ReduceOp (sum, prod, min, max, avg, premul_sum)";
}

}  // namespace

void check_reduce_op_supported(DataType dtype, const ReduceOp& op) {
  require_valid_dtype(dtype);
  if (!is_valid(op.kind)) throw InvalidArgument(not_a_reduce_op(op.kind));
  if (op.kind != ReduceKind::premul_sum) return;  // other kinds ignore the scalar
  const std::string scalar_text = detail::shortest_text(op.scalar);
  if (!std::isfinite(op.scalar)) {
    throw InvalidArgument("premul_sum scalar " + scalar_text + " is not finite; " +
                          std::string(name(dtype)) + " needs a finite scalar");
  }
  if (is_floating(dtype)) return;
  if (std::trunc(op.scalar) != op.scalar) {
    throw InvalidArgument("premul_sum scalar " + scalar_text + " is not an integer; " +
                          std::string(name(dtype)) + " needs an integral scalar");
  }
  const IntegerRange range = integer_range(dtype);
  const bool above = range.upper_inclusive ? op.scalar > range.upper : op.scalar >= range.upper;
  if (op.scalar < range.lowest || above) {
    throw InvalidArgument("premul_sum scalar " + scalar_text + " is outside the range of " +
                          std::string(name(dtype)));
  }
}

Reduction Reduction::make(DataType dtype, std::span<const ReduceOp> ops) {
  require_valid_dtype(dtype);
  if (ops.empty())
    throw InvalidArgument("a reduction needs at least one rank's reduce op (got none)");
  for (std::size_t r = 0; r < ops.size(); ++r) {
    if (!is_valid(ops[r].kind))
      throw InvalidArgument("rank " + std::to_string(r) + ": " + not_a_reduce_op(ops[r].kind));
  }
  const ReduceKind kind = ops[0].kind;
  for (std::size_t r = 1; r < ops.size(); ++r) {
    if (ops[r].kind != kind) {
      throw MismatchError("reduce op mismatch: rank 0 passed " + std::string(name(kind)) +
                          ", rank " + std::to_string(r) + " passed " +
                          std::string(name(ops[r].kind)));
    }
  }
  for (std::size_t r = 0; r < ops.size(); ++r) {
    try {
      check_reduce_op_supported(dtype, ops[r]);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("rank " + std::to_string(r) + ": " + e.what());
    }
  }

  Reduction reduction;
  reduction.dtype = dtype;
  const std::size_t nranks = ops.size();
  switch (kind) {
    case ReduceKind::sum:
    case ReduceKind::prod:
    case ReduceKind::min:
    case ReduceKind::max:
      reduction.combine_op = kind;
      break;
    case ReduceKind::avg:
      reduction.combine_op = ReduceKind::sum;
      if (is_floating(dtype)) {
        reduction.input_scale.assign(nranks, 1.0 / static_cast<double>(nranks));
      } else {
        reduction.post_divisor = static_cast<std::int64_t>(nranks);
      }
      break;
    case ReduceKind::premul_sum:
      reduction.combine_op = ReduceKind::sum;
      reduction.input_scale.reserve(nranks);
      for (const ReduceOp& op : ops) reduction.input_scale.push_back(op.scalar);
      break;
  }
  return reduction;
}

void Reduction::load(int rank, void* dst, const void* src, std::size_t count) const {
  if (rank < 0) {
    throw InvalidArgument("Reduction::load: rank " + std::to_string(rank) + " is negative");
  }
  if (scales_inputs() && static_cast<std::size_t>(rank) >= input_scale.size()) {
    throw InvalidArgument("Reduction::load: rank " + std::to_string(rank) + " is outside 0.." +
                          std::to_string(input_scale.size() - 1) + " (the reduction was made for " +
                          std::to_string(input_scale.size()) + " ranks)");
  }
  if (scales_inputs()) {
    scale_elements(dtype, input_scale[static_cast<std::size_t>(rank)], dst, src, count);
    return;
  }
  const std::size_t bytes = count * size_of(dtype);
  if (bytes != 0 && (dst == nullptr || src == nullptr)) {
    throw InvalidArgument("Reduction::load: null buffer with count " + std::to_string(count));
  }
  if (bytes != 0 && dst != src) std::memmove(dst, src, bytes);
}

void Reduction::combine(void* dst, const void* a, const void* b, std::size_t count) const {
  reduce_elements(dtype, combine_op, dst, a, b, count);
}

void Reduction::finalize(void* data, std::size_t count) const {
  if (has_finalize()) divide_elements(dtype, post_divisor, data, data, count);
}

}  // namespace twinccl
