// ReduceKind / ReduceOp: names, printing and parsing.
#include "twinccl/reduce_op.h"

#include <array>

#include "kernels_text.h"
#include "twinccl/errors.h"

namespace twinccl {
namespace {

// Indexed by the enum's value.
constexpr std::array<std::string_view, 6> kKindNames = {"sum", "prod", "min",
                                                        "max", "avg",  "premul_sum"};

}  // namespace

bool is_valid(ReduceKind kind) { return static_cast<std::size_t>(kind) < kKindNames.size(); }

std::string_view name(ReduceKind kind) {
  return is_valid(kind) ? kKindNames[static_cast<std::size_t>(kind)] : "invalid";
}

std::string to_string(const ReduceOp& op) {
  if (!is_valid(op.kind)) {
    throw InvalidArgument("to_string(ReduceOp): reduce kind value " +
                          detail::raw_value_text(op.kind) + " is outside the ReduceKind enum");
  }
  std::string text(name(op.kind));
  if (op.kind == ReduceKind::premul_sum) {
    // Appended piece by piece: GCC 12's -Wrestrict misfires on "(" + string + ")" at -O3.
    text += '(';
    text += detail::shortest_text(op.scalar);
    text += ')';
  }
  return text;
}

ReduceKind parse_reduce_kind(std::string_view text) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i) {
    if (text == kKindNames[i]) return static_cast<ReduceKind>(i);
  }
  if (text == "premulsum") return ReduceKind::premul_sum;
  throw InvalidArgument("parse_reduce_kind: unknown reduce op '" + std::string(text) +
                        "'; accepted: sum, prod, min, max, avg, premul_sum");
}

}  // namespace twinccl
