// Plain decimal numbers in environment variables and flags: digits with at most one '.', nothing
// else (no sign, space, exponent, hex, "inf" or "nan"), as the README promises for every
// TWINCCL_*_S variable.
//
//   std::optional<double> s = parse_plain_decimal(" 5");   // nullopt: a space
//   std::optional<double> t = parse_plain_decimal("0.5");  // 0.5
#pragma once

#include <optional>
#include <string_view>

namespace twinccl {

// The value of `text` when it is a plain decimal number of at most 32 characters, else nullopt.
std::optional<double> parse_plain_decimal(std::string_view text);

}  // namespace twinccl
