// Private: float16/bfloat16/fp8 <-> float conversions on bits, no double, no table: the scalar
// half of the narrow reduction kernels (kernels_narrow.cc) and the model the SIMD half follows.
//
// How it works.
//   decode: a finite narrow value moved into a float's fields is the same value scaled by a
//   power of two: magnitude bits m, shifted up by (23 - M) mantissa bits, read as a float, are
//   m's value * 2^(bias - 127) (subnormals included: they become float subnormals, which the
//   multiplication by 2^(127 - bias) makes normal again, exactly). Inf and NaN are spelled apart.
//   encode: at or above the target's smallest normal, the float's bits are rounded to nearest even
//   by adding half a unit minus one plus the lowest kept bit, then re-biased (the carry moves into
//   the exponent by itself). Below it, adding 2^(emin - M + 23) makes the float adder round the
//   value onto the subnormal grid; the bits above that constant's are the subnormal's bits (2^M
//   when it rounds up into the smallest normal). Past the largest finite pattern: infinity, or the
//   largest finite value when the format saturates. NaN is never encoded here (callers send a NaN
//   result to the double reference path, which owns NaN's sign and payload rules).
//   Example, float16: 65519.0f is 0x477FEF00; (bits + 0xFFF + 0) >> 13 = 0x23BF, minus 112 << 10
//   = 0x7BFF (65504), which is the largest finite: kept. 65520.0f rounds to 0x7C00: infinity.
//
// Why float suffices: a sum or product of two values of these formats, rounded to float (24 bits)
// and then to the format (at most 11 bits), equals the value rounded once, because 24 >= 2*11+2
// (double rounding is innocuous for + and *, Figueroa 1995), and float's range holds every such
// result or overflows only where the format overflows too. tests/core/test_narrow_kernels.cc
// proves it exhaustively for fp8 and by sampling (plus a hidden exhaustive run) for 16-bit types.
#pragma once

#include <bit>
#include <cstdint>

#include "kernels_float_codec.h"

namespace twinccl::detail {

// float's bits of 2^k, k a normal exponent.
constexpr std::uint32_t float_power_of_two_bits(int k) {
  return static_cast<std::uint32_t>(k + 127) << 23;
}

// Everything about one narrow format that the float path needs, derived from its FloatFormat.
struct NarrowFloat {
  const FloatFormat& format;
  Overflow overflow;

  constexpr std::uint32_t magnitude_mask() const {
    return (std::uint32_t{1} << (format.total_bits - 1)) - 1;
  }
  constexpr int shift() const { return 23 - format.mantissa_bits; }
  // The multiplier that turns the shifted bits into the value: 2^(127 - bias).
  constexpr float decode_scale() const {
    return std::bit_cast<float>(float_power_of_two_bits(127 - format.exponent_bias));
  }
  constexpr std::uint32_t min_normal_float_bits() const {
    return float_power_of_two_bits(1 - format.exponent_bias);
  }
  constexpr std::uint32_t rebias() const {
    return static_cast<std::uint32_t>(127 - format.exponent_bias) << format.mantissa_bits;
  }
  constexpr std::uint32_t subnormal_magic_bits() const {
    return float_power_of_two_bits(1 - format.exponent_bias - format.mantissa_bits + 23);
  }
  constexpr std::uint32_t saturated() const {
    return overflow == Overflow::saturate || format.inf_bits == 0 ? format.max_finite_bits
                                                                  : format.inf_bits;
  }
  constexpr bool is_nan(std::uint32_t bits) const {
    const std::uint32_t m = bits & magnitude_mask();
    return format.ieee_specials ? m > format.inf_bits : m == format.nan_bits;
  }

  // Exact for every pattern; NaN patterns give a quiet float NaN. Written as selects (no
  // branch) so that a loop of them vectorizes.
  float decode(std::uint32_t bits) const {
    const std::uint32_t m = bits & magnitude_mask();
    const std::uint32_t sign = (bits >> (format.total_bits - 1)) << 31;
    const std::uint32_t finite =
        std::bit_cast<std::uint32_t>(std::bit_cast<float>(m << shift()) * decode_scale());
    const bool infinite = format.ieee_specials && m == format.inf_bits;
    const std::uint32_t special = infinite ? 0x7F800000u : 0x7FC00000u;
    return std::bit_cast<float>(sign | (is_nan(bits) || infinite ? special : finite));
  }

  // Round to nearest even; x must not be NaN. Both roundings are computed and one is selected
  // (unsigned arithmetic: the unused one may wrap, harmlessly).
  std::uint32_t encode(float x) const {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
    const std::uint32_t sign = (bits >> 31) << (format.total_bits - 1);
    const std::uint32_t abs = bits & 0x7FFFFFFFu;
    const std::uint32_t half_minus_one = (std::uint32_t{1} << (shift() - 1)) - 1;
    const std::uint32_t normal =
        ((abs + half_minus_one + ((abs >> shift()) & 1)) >> shift()) - rebias();
    const float magic = std::bit_cast<float>(subnormal_magic_bits());
    const std::uint32_t subnormal =
        std::bit_cast<std::uint32_t>(std::bit_cast<float>(abs) + magic) - subnormal_magic_bits();
    std::uint32_t magnitude = abs >= min_normal_float_bits() ? normal : subnormal;
    magnitude = magnitude > format.max_finite_bits ? saturated() : magnitude;
    return sign | magnitude;
  }
};

// The same overflow rules as NarrowCodec in kernels_elements.h: fp8 reductions saturate.
inline constexpr NarrowFloat kFloat16Float{kFloat16, Overflow::to_infinity};
inline constexpr NarrowFloat kBfloat16Float{kBfloat16, Overflow::to_infinity};
inline constexpr NarrowFloat kFloat8E4m3Float{kFloat8E4m3, Overflow::saturate};
inline constexpr NarrowFloat kFloat8E5m2Float{kFloat8E5m2, Overflow::saturate};

}  // namespace twinccl::detail
