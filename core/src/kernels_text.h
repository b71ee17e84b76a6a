// Private helpers for messages written by the data-type, reduce-op and kernel files: the
// shortest text that reads back as the same double ("0.5", "1e+300", "nan"), and the text of an
// enum's raw value for "value outside the enum" errors.
#pragma once

#include <charconv>
#include <cmath>
#include <string>
#include <type_traits>

namespace twinccl::detail {

inline std::string shortest_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  const auto result = std::to_chars(text, text + sizeof(text), value);
  return std::string(text, result.ptr);
}

template <typename Enum>
std::string raw_value_text(Enum value) {
  return std::to_string(static_cast<long long>(static_cast<std::underlying_type_t<Enum>>(value)));
}

}  // namespace twinccl::detail
