// IEEE binary16, bfloat16 and OCP float8 (e4m3, e5m2) conversions; the codec itself is in
// kernels_float_codec.h so the reduction kernels can inline it.
#include "twinccl/float_formats.h"

#include "kernels_float_codec.h"

namespace twinccl::fp {

using detail::decode;
using detail::encode;
using detail::Overflow;

std::uint16_t to_float16(double x) {
  return static_cast<std::uint16_t>(encode(detail::kFloat16, Overflow::to_infinity, x));
}
double from_float16(std::uint16_t bits) { return decode(detail::kFloat16, bits); }

std::uint16_t to_bfloat16(double x) {
  return static_cast<std::uint16_t>(encode(detail::kBfloat16, Overflow::to_infinity, x));
}
double from_bfloat16(std::uint16_t bits) { return decode(detail::kBfloat16, bits); }

std::uint8_t to_float8_e4m3(double x) {
  return static_cast<std::uint8_t>(encode(detail::kFloat8E4m3, Overflow::saturate, x));
}
double from_float8_e4m3(std::uint8_t bits) { return decode(detail::kFloat8E4m3, bits); }

std::uint8_t to_float8_e5m2(double x) {
  return static_cast<std::uint8_t>(encode(detail::kFloat8E5m2, Overflow::saturate, x));
}
std::uint8_t to_float8_e5m2_ieee(double x) {
  return static_cast<std::uint8_t>(encode(detail::kFloat8E5m2, Overflow::to_infinity, x));
}
double from_float8_e5m2(std::uint8_t bits) { return decode(detail::kFloat8E5m2, bits); }

}  // namespace twinccl::fp
