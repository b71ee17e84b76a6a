// Private: what the reduction kernels know about one element: how it is stored and loaded
// (a Codec per DataType) and how two values combine (an Op per ReduceKind).
//
// Native types (integers, float, double) are computed in themselves; integers in their unsigned
// twin so that overflow wraps instead of being undefined. The formats without a C++ type
// (float16, bfloat16, fp8) are computed in double and rounded once when stored, which is the
// correctly rounded result of the narrow format (see float_formats.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "kernels_float_codec.h"
#include "kernels_text.h"
#include "twinccl/data_type.h"
#include "twinccl/errors.h"

namespace twinccl::detail {

// A native element: stored and computed as T.
template <typename T>
struct NativeCodec {
  using Storage = T;
  using Value = T;
  static Value load(Storage x) { return x; }
  static Storage store(Value v) { return v; }
};

// A narrow float stored as bits, computed in double; fp8 reductions saturate to finite values.
template <const FloatFormat& kFormat, typename Bits, Overflow kOverflow>
struct NarrowCodec {
  using Storage = Bits;
  using Value = double;
  static Value load(Storage x) { return decode(kFormat, x); }
  static Storage store(Value v) { return static_cast<Storage>(encode(kFormat, kOverflow, v)); }
};

using Float16Codec = NarrowCodec<kFloat16, std::uint16_t, Overflow::to_infinity>;
using Bfloat16Codec = NarrowCodec<kBfloat16, std::uint16_t, Overflow::to_infinity>;
using Float8E4m3Codec = NarrowCodec<kFloat8E4m3, std::uint8_t, Overflow::saturate>;
using Float8E5m2Codec = NarrowCodec<kFloat8E5m2, std::uint8_t, Overflow::saturate>;

template <typename T>
using WrapType = std::make_unsigned_t<T>;

struct SumOp {
  template <typename V>
  static V apply(V a, V b) {
    if constexpr (std::is_integral_v<V>) {
      return static_cast<V>(static_cast<WrapType<V>>(a) + static_cast<WrapType<V>>(b));
    } else {
      return a + b;
    }
  }
};

struct ProdOp {
  template <typename V>
  static V apply(V a, V b) {
    if constexpr (std::is_integral_v<V>) {
      // Promote narrow unsigned types to unsigned int so that the product cannot overflow int.
      using Wide = std::common_type_t<WrapType<V>, unsigned int>;
      return static_cast<V>(static_cast<Wide>(static_cast<WrapType<V>>(a)) *
                            static_cast<Wide>(static_cast<WrapType<V>>(b)));
    } else {
      return a * b;
    }
  }
};

// Sum or product with the NaN rule spelled out: a NaN operand is the result, the first one when
// both are NaN. x86 returns the NaN of whichever operand the compiler placed first, and that order
// differs between optimisation levels and between in-place and out-of-place loops, so without the
// rule a narrow type's NaN sign (kept by its encode) would depend on the build. Used for narrow
// floats only (reduce_kernels.cc): their double path is the reference, not the fast path.
template <typename Op>
struct NanOrderedOp {
  template <typename V>
  static V apply(V a, V b) {
    if (a != a) return a;
    if (b != b) return b;
    return Op::apply(a, b);
  }
};

// fmin/fmax semantics (a NaN loses to a number), written as selects so loops vectorize.
// Signed zeros are ordered -0 < +0 so that the result does not depend on the operand order.
struct MinOp {
  template <typename V>
  static V apply(V a, V b) {
    if constexpr (std::is_integral_v<V>) {
      return a < b ? a : b;
    } else {
      if (b != b) return a;
      if (a != a) return b;
      if (a == b) return std::signbit(a) ? a : b;
      return a < b ? a : b;
    }
  }
};

struct MaxOp {
  template <typename V>
  static V apply(V a, V b) {
    if constexpr (std::is_integral_v<V>) {
      return a > b ? a : b;
    } else {
      if (b != b) return a;
      if (a != a) return b;
      if (a == b) return std::signbit(a) ? b : a;
      return a > b ? a : b;
    }
  }
};

// double -> float, rounded to nearest even, without the undefined behaviour of casting a finite
// value beyond float's range: past FLT_MAX plus half an ulp (2^128 - 2^103) it is infinity.
inline float round_to_float32(double value) {
  constexpr double kMaxFloat = std::numeric_limits<float>::max();
  constexpr double kRoundsToInfinity = power_of_two(127) * 2.0 - power_of_two(103);
  const double magnitude = std::fabs(value);
  if (std::isfinite(value) && magnitude > kMaxFloat) {
    const float clamped = magnitude >= kRoundsToInfinity ? std::numeric_limits<float>::infinity()
                                                         : std::numeric_limits<float>::max();
    return std::signbit(value) ? -clamped : clamped;
  }
  return static_cast<float>(value);
}

// Truncates a finite double toward zero and wraps it modulo 2^bits into the integer type T.
template <typename T>
T wrap_to_integer(double value) {
  constexpr double kTwoTo64 = 18446744073709551616.0;
  const double remainder = std::fmod(std::trunc(value), kTwoTo64);  // exact, |r| < 2^64
  std::uint64_t bits = 0;
  if (remainder < 0) {
    bits = std::uint64_t{0} - static_cast<std::uint64_t>(-remainder);
  } else {
    bits = static_cast<std::uint64_t>(remainder);
  }
  return static_cast<T>(static_cast<WrapType<T>>(bits));
}

template <typename T>
bool aligned_for(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % alignof(T) == 0;
}

// Calls fn(Codec{}) with the codec of `type`; throws for a value outside the enum.
template <typename Fn>
void with_codec(DataType type, const char* function, Fn&& fn) {
  switch (type) {
    case DataType::int8:
      return fn(NativeCodec<std::int8_t>{});
    case DataType::uint8:
      return fn(NativeCodec<std::uint8_t>{});
    case DataType::int32:
      return fn(NativeCodec<std::int32_t>{});
    case DataType::uint32:
      return fn(NativeCodec<std::uint32_t>{});
    case DataType::int64:
      return fn(NativeCodec<std::int64_t>{});
    case DataType::uint64:
      return fn(NativeCodec<std::uint64_t>{});
    case DataType::float16:
      return fn(Float16Codec{});
    case DataType::bfloat16:
      return fn(Bfloat16Codec{});
    case DataType::float32:
      return fn(NativeCodec<float>{});
    case DataType::float64:
      return fn(NativeCodec<double>{});
    case DataType::float8_e4m3:
      return fn(Float8E4m3Codec{});
    case DataType::float8_e5m2:
      return fn(Float8E5m2Codec{});
  }
  throw InvalidArgument(std::string(function) + ": data type value " + raw_value_text(type) +
                        " is outside the DataType enum");
}

}  // namespace twinccl::detail
