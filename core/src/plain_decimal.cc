// Plain decimal numbers (twinccl/plain_decimal.h): the characters are checked first, so strtod
// never sees a sign, a space, an exponent or a name it would accept.
#include "twinccl/plain_decimal.h"

#include <cstdlib>
#include <string>

namespace twinccl {

std::optional<double> parse_plain_decimal(std::string_view text) {
  std::size_t digits = 0, dots = 0;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == '.') {
      ++dots;
    } else {
      return std::nullopt;
    }
  }
  if (digits == 0 || dots > 1 || text.size() > 32) return std::nullopt;
  return std::strtod(std::string(text).c_str(), nullptr);
}

}  // namespace twinccl
