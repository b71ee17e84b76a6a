// Reduction operators: sum, prod, min, max, avg and pre-multiplied sum.
//
//   comm.all_reduce(x, y, n, DataType::float32, ReduceOp::sum());
//   comm.all_reduce(x, y, n, DataType::float32, ReduceOp::premul_sum(0.5 * (rank + 1)));
//
// Semantics (NCCL's): avg on floating types is premul_sum with 1/nranks applied to every input;
// avg on integers sums and then divides by nranks (truncating toward zero). premul_sum multiplies
// each rank's input by that rank's own scalar (converted to the data type) before summing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace twinccl {

enum class ReduceKind : std::uint8_t { sum, prod, min, max, avg, premul_sum };

struct ReduceOp {
  ReduceKind kind = ReduceKind::sum;
  double scalar = 1.0;  // premul_sum only: this rank's multiplier

  static constexpr ReduceOp sum() { return {ReduceKind::sum, 1.0}; }
  static constexpr ReduceOp prod() { return {ReduceKind::prod, 1.0}; }
  static constexpr ReduceOp min() { return {ReduceKind::min, 1.0}; }
  static constexpr ReduceOp max() { return {ReduceKind::max, 1.0}; }
  static constexpr ReduceOp avg() { return {ReduceKind::avg, 1.0}; }
  static constexpr ReduceOp premul_sum(double s) { return {ReduceKind::premul_sum, s}; }

  friend bool operator==(const ReduceOp&, const ReduceOp&) = default;
};

// "sum", "prod", "min", "max", "avg", "premul_sum"; "invalid" outside the enum.
std::string_view name(ReduceKind kind);
// "sum", ..., "premul_sum(0.5)".
std::string to_string(const ReduceOp& op);
// Accepts sum|prod|min|max|avg|premul_sum (scalar 1). Throws InvalidArgument otherwise.
ReduceKind parse_reduce_kind(std::string_view text);
bool is_valid(ReduceKind kind);

}  // namespace twinccl
