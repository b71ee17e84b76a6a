// Storage formats without a C++ type: IEEE binary16, bfloat16, OCP float8 e4m3 and e5m2.
//
//   std::uint16_t h = twinccl::fp::to_float16(0.1);     // round to nearest even
//   double x = twinccl::fp::from_float16(h);           // exact
//
// Conversions from double round to nearest, ties to even, exactly once. Because every value of
// these formats (and float32) is exact in double and double has more than 2p+2 bits, computing an
// operation in double and rounding once gives the correctly rounded result of the narrow format.
// float16, bfloat16, e5m2: overflow gives +-inf, NaN stays NaN (quiet).
// e4m3 (no infinities; 0x7F/0xFF are NaN; max finite 448) and e5m2 when saturating: values past
// the largest finite magnitude clamp to it (NCCL reduces fp8 with saturation to finite), NaN
// stays NaN. to_float8_e5m2 saturates too; to_float8_e5m2_ieee overflows to inf.
#pragma once

#include <cstdint>

namespace twinccl::fp {

std::uint16_t to_float16(double x);
double from_float16(std::uint16_t bits);

std::uint16_t to_bfloat16(double x);
double from_bfloat16(std::uint16_t bits);

std::uint8_t to_float8_e4m3(double x);  // saturating to +-448, NaN -> 0x7F (sign kept)
double from_float8_e4m3(std::uint8_t bits);

std::uint8_t to_float8_e5m2(double x);       // saturating to +-57344 (inf input too), NaN -> NaN
std::uint8_t to_float8_e5m2_ieee(double x);  // overflow to +-inf
double from_float8_e5m2(std::uint8_t bits);

}  // namespace twinccl::fp
