#include "flag_values.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "twinccl/ascii_case.h"
#include "twinccl/errors.h"
#include "twinccl/output_file.h"

namespace twinccl::cli {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool all_digits(const std::string& text) {
  for (char c : text) {
    if (!is_digit(c)) return false;
  }
  return !text.empty();
}

[[noreturn]] void bad(std::string_view flag, const std::string& text, const std::string& expected) {
  throw InvalidArgument(fmt::format("{} '{}': {}", flag, shown(text), expected));
}

// Leading decimal digits of text as an unsigned value; false when there are none or it overflows.
bool leading_digits(const std::string& text, std::size_t& used, unsigned long long& value) {
  value = 0;
  used = 0;
  while (used < text.size() && is_digit(text[used])) {
    auto digit = static_cast<unsigned>(text[used] - '0');
    if (value > (std::numeric_limits<unsigned long long>::max() - digit) / 10) return false;
    value = value * 10 + digit;
    ++used;
  }
  return used > 0;
}

}  // namespace

std::string shown(std::string_view text) { return shown_value(text); }

void check_protocol_flag(std::string_view flag, const std::string& text) {
  if (text == "LL" || text == "LL128" || text == "Simple") return;
  throw InvalidArgument(std::string(flag) + " '" + shown(text) +
                        "': unknown protocol; valid: LL, LL128, Simple");
}

long long parse_int_flag(std::string_view flag, const std::string& text, long long min,
                         long long max, std::string_view why_max) {
  const std::string expected =
      fmt::format("expected a whole number in [{}, {}] (decimal digits only){}{}", min, max,
                  why_max.empty() ? "" : "; ", why_max);
  std::size_t used = 0;
  unsigned long long value = 0;
  bool negative = !text.empty() && text[0] == '-';
  std::string digits = negative ? text.substr(1) : text;
  if (!all_digits(digits)) bad(flag, text, expected);
  if (!leading_digits(digits, used, value)) bad(flag, text, "is too large: " + expected);
  if (negative) bad(flag, text, "must not be negative: " + expected);
  if (value > static_cast<unsigned long long>(max) || static_cast<long long>(value) < min) {
    bad(flag, text, "out of range: " + expected);
  }
  return static_cast<long long>(value);
}

double parse_number_flag(std::string_view flag, const std::string& text) {
  // digits [. digits] [e [+-] digits], or . digits ...; strtod alone would also take nan, inf, hex
  // and leading spaces.
  const std::string expected = "expected a decimal number such as 2 or 1.5";
  std::size_t i = 0;
  bool negative = i < text.size() && (text[i] == '-' || text[i] == '+');
  if (negative) ++i;
  std::size_t mantissa_digits = 0;
  while (i < text.size() && is_digit(text[i])) ++i, ++mantissa_digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && is_digit(text[i])) ++i, ++mantissa_digits;
  }
  if (mantissa_digits == 0) bad(flag, text, expected);
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    std::size_t exponent_digits = 0;
    while (i < text.size() && is_digit(text[i])) ++i, ++exponent_digits;
    if (exponent_digits == 0) bad(flag, text, expected);
  }
  if (i != text.size()) bad(flag, text, expected);
  double value = std::strtod(text.c_str(), nullptr);
  if (!std::isfinite(value)) bad(flag, text, "is too large: " + expected);
  return value;
}

std::size_t parse_bytes_flag(std::string_view flag, const std::string& text) {
  const std::string expected =
      "expected bytes with an optional K, M, G or T suffix (powers of 1024), e.g. 8, 64K, 1.5M, "
      "128MB, 8G";
  if (!text.empty() && text[0] == '-') bad(flag, text, "a size must not be negative; " + expected);
  std::size_t used = 0;
  unsigned long long value = 0;
  if (text.empty() || !is_digit(text[0])) bad(flag, text, expected);
  if (!leading_digits(text, used, value)) bad(flag, text, "is too large (at most 1P = 2^50 bytes)");
  // A fraction, as nccl-tests reads sizes ("1.5M"); the result is rounded down to whole bytes.
  double fraction = 0;
  if (used < text.size() && text[used] == '.') {
    std::size_t end = used + 1;
    while (end < text.size() && is_digit(text[end])) ++end;
    if (end == used + 1) bad(flag, text, expected);
    fraction = std::strtod(("0" + text.substr(used, end - used)).c_str(), nullptr);
    used = end;
  }
  const std::string suffix = lowercase_ascii(text.substr(used));
  unsigned shift = 0;
  if (!suffix.empty() && suffix != "b") {
    const std::string units = "kmgtp";
    std::size_t unit = units.find(suffix[0]);
    std::string rest = suffix.substr(1);
    if (unit == std::string::npos || !(rest.empty() || rest == "b" || rest == "ib")) {
      bad(flag, text, "unknown suffix '" + shown(text.substr(used)) + "'; " + expected);
    }
    shift = 10 * static_cast<unsigned>(unit + 1);
  }
  if (value > (kMaxSizeBytes >> shift) || (value == (kMaxSizeBytes >> shift) && fraction > 0)) {
    bad(flag, text, "is too large (at most 1P = 2^50 bytes)");
  }
  return static_cast<std::size_t>(value << shift) +
         static_cast<std::size_t>(
             std::floor(fraction * static_cast<double>(std::size_t{1} << shift)));
}

std::string describe_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  double v = bytes;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  if (u == 0) return fmt::format("{:.0f} bytes", bytes);
  return fmt::format("{:.0f} bytes ({:.1f} {})", bytes, v, units[u]);
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace twinccl::cli
