// Private: the bit-level codec behind float_formats.h, inline so the reduction kernels convert
// without a call per element.
//
// How it works. A format is described by its mantissa bits M, its exponent bias and how it spells
// the special values. Encoding reads the double's bits: the 53-bit significand is shifted right
// so that one unit of the result is one unit in the last place of the target (for a value below
// the smallest normal the shift grows, which is what makes subnormals), then rounded to nearest,
// ties to even, from the bits shifted out. The magnitude is assembled as
//     bits = (exponent - min_exponent) << M  +  rounded significand
// which is linear, so a significand that rounds up to 2^(M+1) (or a subnormal that rounds up to
// 2^M) carries into the exponent field by itself. A magnitude past the largest finite pattern is
// an overflow: infinity, or the largest finite value when the format saturates.
// Example, float16 (M=10, bias 15): 65520 = 1.99951171875 * 2^15; significand >> 42 leaves 2047
// with a remainder of exactly one half; 2047 is odd, so it rounds to 2048, which carries into the
// exponent: bits 0x7C00, past 0x7BFF (65504), hence +inf.
// Decoding is exact: significand * 2^(exponent - bias - M), the power of two built from its bits.
#pragma once

#include <bit>
#include <cstdint>

namespace twinccl::detail {

struct FloatFormat {
  int mantissa_bits;
  int exponent_bias;
  std::uint32_t max_finite_bits;  // magnitude bits of the largest finite value
  std::uint32_t inf_bits;         // magnitude bits of infinity; 0 when the format has none
  std::uint32_t nan_bits;         // magnitude bits of the quiet NaN it produces
  std::uint32_t exponent_mask;    // exponent field, in place
  bool ieee_specials;             // all-ones exponent is inf/NaN (IEEE); else only nan_bits is NaN
  int total_bits;
};

inline constexpr FloatFormat kFloat16{10, 15, 0x7BFF, 0x7C00, 0x7E00, 0x7C00, true, 16};
inline constexpr FloatFormat kBfloat16{7, 127, 0x7F7F, 0x7F80, 0x7FC0, 0x7F80, true, 16};
inline constexpr FloatFormat kFloat8E4m3{3, 7, 0x7E, 0, 0x7F, 0x78, false, 8};
inline constexpr FloatFormat kFloat8E5m2{2, 15, 0x7B, 0x7C, 0x7E, 0x7C, true, 8};

enum class Overflow { to_infinity, saturate };

// 2^k for k in [-1022, 1023], exact.
constexpr double power_of_two(int k) {
  return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
}

// Normal results (the common case) take a short path on the double's bits: adding half a unit
// minus one, plus the lowest kept bit, rounds to nearest even, and the carry moves into the
// exponent by itself. Everything else (zero, subnormal results, overflow, inf, NaN) takes the
// general path below.
constexpr std::uint32_t encode(const FloatFormat& f, Overflow overflow, double x) {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const std::uint32_t sign = static_cast<std::uint32_t>(bits >> 63) << (f.total_bits - 1);
  const std::uint64_t abs_bits = bits & ~(std::uint64_t{1} << 63);
  const int double_exponent = static_cast<int>(abs_bits >> 52);
  const std::uint32_t saturated = overflow == Overflow::saturate ? f.max_finite_bits : f.inf_bits;
  const int min_exponent = 1 - f.exponent_bias;
  const int max_exponent = static_cast<int>(f.max_finite_bits >> f.mantissa_bits) - f.exponent_bias;
  if (double_exponent >= 1023 + min_exponent && double_exponent <= 1023 + max_exponent) {
    const int shift = 52 - f.mantissa_bits;
    const std::uint64_t half_minus_one = (std::uint64_t{1} << (shift - 1)) - 1;
    const std::uint64_t rounded = (abs_bits + half_minus_one + ((abs_bits >> shift) & 1)) >> shift;
    const std::uint64_t magnitude =
        rounded - (static_cast<std::uint64_t>(1023 - f.exponent_bias) << f.mantissa_bits);
    if (magnitude > f.max_finite_bits) return sign | saturated;
    return sign | static_cast<std::uint32_t>(magnitude);
  }
  const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  if (double_exponent == 0x7FF) {
    if (fraction != 0) return sign | f.nan_bits;
    return sign | (f.inf_bits != 0 ? saturated : f.max_finite_bits);
  }
  // Double subnormals (and zero) are far below half the smallest subnormal of every format here.
  if (double_exponent == 0) return sign;
  const int exponent = double_exponent - 1023;
  const std::uint64_t significand = (std::uint64_t{1} << 52) | fraction;
  const int shift = 52 - f.mantissa_bits + (exponent < min_exponent ? min_exponent - exponent : 0);
  if (shift >= 54) return sign;  // below half the smallest subnormal: rounds to zero
  std::uint64_t rounded = significand >> shift;
  const std::uint64_t remainder = significand & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (remainder > half || (remainder == half && (rounded & 1) != 0)) ++rounded;
  const int biased = exponent < min_exponent ? 0 : exponent - min_exponent;
  const std::uint64_t magnitude = (static_cast<std::uint64_t>(biased) << f.mantissa_bits) + rounded;
  if (magnitude > f.max_finite_bits) return sign | saturated;
  return sign | static_cast<std::uint32_t>(magnitude);
}

constexpr double decode(const FloatFormat& f, std::uint32_t bits) {
  const bool negative = ((bits >> (f.total_bits - 1)) & 1) != 0;
  const std::uint32_t magnitude = bits & ((std::uint32_t{1} << (f.total_bits - 1)) - 1);
  const std::uint32_t mantissa = magnitude & ((std::uint32_t{1} << f.mantissa_bits) - 1);
  const int exponent_field = static_cast<int>(magnitude >> f.mantissa_bits);
  const bool special =
      f.ieee_specials ? (magnitude & f.exponent_mask) == f.exponent_mask : magnitude == f.nan_bits;
  if (exponent_field != 0 && !special) {  // normal: move the fields into a double's bits
    const std::uint64_t rebiased =
        magnitude + (static_cast<std::uint64_t>(1023 - f.exponent_bias) << f.mantissa_bits);
    return std::bit_cast<double>((static_cast<std::uint64_t>(negative) << 63) |
                                 (rebiased << (52 - f.mantissa_bits)));
  }
  double value = 0.0;
  if (f.ieee_specials && (magnitude & f.exponent_mask) == f.exponent_mask) {
    value = mantissa != 0 ? std::bit_cast<double>(std::uint64_t{0x7FF8000000000000})
                          : std::bit_cast<double>(std::uint64_t{0x7FF0000000000000});
  } else if (!f.ieee_specials && magnitude == f.nan_bits) {
    value = std::bit_cast<double>(std::uint64_t{0x7FF8000000000000});
  } else if (exponent_field == 0) {
    value = static_cast<double>(mantissa) * power_of_two(1 - f.exponent_bias - f.mantissa_bits);
  } else {
    const std::uint32_t significand = (std::uint32_t{1} << f.mantissa_bits) | mantissa;
    value = static_cast<double>(significand) *
            power_of_two(exponent_field - f.exponent_bias - f.mantissa_bits);
  }
  return negative ? -value : value;
}

}  // namespace twinccl::detail
