// float16 / bfloat16 / fp8 e4m3 / e5m2: exhaustive round trips, ties-to-even at every midpoint,
// overflow thresholds and saturation, subnormals, signed zero and NaN.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "twinccl/float_formats.h"

namespace fp = twinccl::fp;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();

struct Format {
  const char* name;
  int bits;
  std::uint32_t max_finite;  // magnitude bits of the largest finite value
  bool saturates;            // overflow (and infinity) clamps to max_finite
  bool has_inf;              // the format can hold infinity at all
  std::uint32_t (*encode)(double);
  double (*decode)(std::uint32_t);
};

const std::vector<Format>& formats() {
  static const std::vector<Format> all = {
      {"float16", 16, 0x7BFF, false, true,
       [](double x) -> std::uint32_t { return fp::to_float16(x); },
       [](std::uint32_t b) { return fp::from_float16(static_cast<std::uint16_t>(b)); }},
      {"bfloat16", 16, 0x7F7F, false, true,
       [](double x) -> std::uint32_t { return fp::to_bfloat16(x); },
       [](std::uint32_t b) { return fp::from_bfloat16(static_cast<std::uint16_t>(b)); }},
      {"float8_e4m3", 8, 0x7E, true, false,
       [](double x) -> std::uint32_t { return fp::to_float8_e4m3(x); },
       [](std::uint32_t b) { return fp::from_float8_e4m3(static_cast<std::uint8_t>(b)); }},
      {"float8_e5m2", 8, 0x7B, true, true,
       [](double x) -> std::uint32_t { return fp::to_float8_e5m2(x); },
       [](std::uint32_t b) { return fp::from_float8_e5m2(static_cast<std::uint8_t>(b)); }},
      {"float8_e5m2_ieee", 8, 0x7B, false, true,
       [](double x) -> std::uint32_t { return fp::to_float8_e5m2_ieee(x); },
       [](std::uint32_t b) { return fp::from_float8_e5m2(static_cast<std::uint8_t>(b)); }},
  };
  return all;
}

std::uint32_t sign_bit(const Format& f) { return std::uint32_t{1} << (f.bits - 1); }

// What a value past the largest finite magnitude becomes.
std::uint32_t overflow_bits(const Format& f) {
  return f.saturates ? f.max_finite : f.max_finite + 1;
}

}  // namespace

TEST_CASE("every bit pattern round-trips through double", "[float_formats]") {
  for (const Format& f : formats()) {
    INFO(f.name);
    int nans = 0;
    int mismatches = 0;
    for (std::uint32_t bits = 0; bits < (std::uint32_t{1} << f.bits); ++bits) {
      const double x = f.decode(bits);
      const std::uint32_t back = f.encode(x);
      const bool negative = (bits & sign_bit(f)) != 0;
      if (std::isnan(x)) {
        ++nans;
        if (!std::isnan(f.decode(back)) || ((back & sign_bit(f)) != 0) != negative) ++mismatches;
      } else if (std::isinf(x) && f.saturates) {
        if (back != (f.max_finite | (negative ? sign_bit(f) : 0))) ++mismatches;
      } else if (back != bits) {
        ++mismatches;
      }
      if (!std::isnan(x) && std::signbit(x) != negative) ++mismatches;
    }
    CHECK(mismatches == 0);
    const int expected_nans =
        f.bits == 16 ? (f.max_finite == 0x7BFF ? 2 * 1023 : 2 * 127) : (f.has_inf ? 2 * 3 : 2);
    CHECK(nans == expected_nans);
  }
}

TEST_CASE("decoding is strictly increasing over the finite positive patterns", "[float_formats]") {
  for (const Format& f : formats()) {
    INFO(f.name);
    int out_of_order = 0;
    for (std::uint32_t bits = 1; bits <= f.max_finite; ++bits) {
      if (!(f.decode(bits) > f.decode(bits - 1))) ++out_of_order;
      if (f.decode(bits | sign_bit(f)) != -f.decode(bits)) ++out_of_order;
    }
    CHECK(out_of_order == 0);
  }
}

TEST_CASE("known values decode and encode exactly", "[float_formats]") {
  CHECK(fp::to_float16(1.0) == 0x3C00);
  CHECK(fp::to_float16(0.1) == 0x2E66);
  CHECK(fp::to_float16(-2.0) == 0xC000);
  CHECK(fp::from_float16(0x7BFF) == 65504.0);
  CHECK(fp::from_float16(0x0001) == std::ldexp(1.0, -24));
  CHECK(std::isinf(fp::from_float16(0x7C00)));
  CHECK(fp::to_bfloat16(1.0) == 0x3F80);
  CHECK(fp::to_bfloat16(0.1) == 0x3DCD);
  CHECK(fp::from_bfloat16(0x7F7F) == std::ldexp(255.0, 120));
  CHECK(fp::from_bfloat16(0x0001) == std::ldexp(1.0, -133));
  CHECK(fp::to_float8_e4m3(1.0) == 0x38);
  CHECK(fp::from_float8_e4m3(0x7E) == 448.0);
  CHECK(fp::from_float8_e4m3(0x01) == std::ldexp(1.0, -9));
  CHECK(fp::from_float8_e4m3(0x08) == std::ldexp(1.0, -6));
  CHECK(std::isnan(fp::from_float8_e4m3(0x7F)));
  CHECK(std::isnan(fp::from_float8_e4m3(0xFF)));
  CHECK(fp::from_float8_e4m3(0x78) == 256.0);  // exponent all ones is still finite in e4m3
  CHECK(fp::to_float8_e5m2(1.0) == 0x3C);
  CHECK(fp::from_float8_e5m2(0x7B) == 57344.0);
  CHECK(fp::from_float8_e5m2(0x01) == std::ldexp(1.0, -16));
  CHECK(fp::from_float8_e5m2(0x7C) == kInf);
  CHECK(fp::from_float8_e5m2(0xFC) == -kInf);
}

TEST_CASE("midpoints round to even and a hair off a midpoint rounds to nearest",
          "[float_formats]") {
  for (const Format& f : formats()) {
    INFO(f.name);
    int wrong = 0;
    for (std::uint32_t bits = 0; bits < f.max_finite; ++bits) {
      const double lo = f.decode(bits);
      const double hi = f.decode(bits + 1);
      const double mid = lo + (hi - lo) / 2;  // exact: both have few significant bits
      const std::uint32_t even = (bits % 2 == 0) ? bits : bits + 1;
      for (const std::uint32_t sign : {std::uint32_t{0}, sign_bit(f)}) {
        const double s = sign != 0 ? -1.0 : 1.0;
        if (f.encode(s * mid) != (even | sign)) ++wrong;
        if (f.encode(s * std::nextafter(mid, 0.0)) != (bits | sign)) ++wrong;
        if (f.encode(s * std::nextafter(mid, kInf)) != ((bits + 1) | sign)) ++wrong;
        if (f.encode(s * hi) != ((bits + 1) | sign)) ++wrong;
      }
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("overflow goes to infinity or saturates at the rounding threshold", "[float_formats]") {
  for (const Format& f : formats()) {
    INFO(f.name);
    const double max = f.decode(f.max_finite);
    const double ulp = max - f.decode(f.max_finite - 1);
    const double threshold = max + ulp / 2;  // the tie rounds to even: away from max (odd)
    CHECK(f.encode(std::nextafter(threshold, 0.0)) == f.max_finite);
    CHECK(f.encode(threshold) == overflow_bits(f));
    CHECK(f.encode(-threshold) == (overflow_bits(f) | sign_bit(f)));
    CHECK(f.encode(1e300) == overflow_bits(f));
    CHECK(f.encode(std::numeric_limits<double>::max()) == overflow_bits(f));
    CHECK(f.encode(kInf) == (f.has_inf ? overflow_bits(f) : f.max_finite));
    CHECK(f.encode(-kInf) == ((f.has_inf ? overflow_bits(f) : f.max_finite) | sign_bit(f)));
  }
  CHECK(fp::to_float16(65520.0) == 0x7C00);
  CHECK(fp::to_float16(65519.99) == 0x7BFF);
  CHECK(fp::to_float16(-65520.0) == 0xFC00);
  CHECK(fp::to_bfloat16(std::ldexp(511.0, 119)) == 0x7F80);
  CHECK(fp::to_float8_e4m3(464.0) == 0x7E);
  CHECK(fp::to_float8_e4m3(1e9) == 0x7E);
  CHECK(fp::to_float8_e4m3(-kInf) == 0xFE);
  CHECK(fp::to_float8_e5m2(61440.0) == 0x7B);
  CHECK(fp::to_float8_e5m2(kInf) == 0x7B);
  CHECK(fp::to_float8_e5m2_ieee(61440.0) == 0x7C);
  CHECK(fp::to_float8_e5m2_ieee(61439.0) == 0x7B);
  CHECK(fp::to_float8_e5m2_ieee(-kInf) == 0xFC);
}

TEST_CASE("NaN stays NaN and keeps its sign", "[float_formats]") {
  CHECK(fp::to_float16(kNan) == 0x7E00);
  CHECK(fp::to_float16(-kNan) == 0xFE00);
  CHECK(fp::to_bfloat16(kNan) == 0x7FC0);
  CHECK(fp::to_float8_e4m3(kNan) == 0x7F);
  CHECK(fp::to_float8_e4m3(-kNan) == 0xFF);
  CHECK(std::isnan(fp::from_float8_e5m2(fp::to_float8_e5m2(kNan))));
  CHECK(std::isnan(fp::from_float8_e5m2(fp::to_float8_e5m2_ieee(kNan))));
  CHECK(fp::to_float8_e5m2(kNan) != 0x7B);  // saturation is for overflow, not NaN
}

TEST_CASE("subnormals round to nearest even including up into the normal range",
          "[float_formats]") {
  const double h = std::ldexp(1.0, -24);  // float16's smallest subnormal
  CHECK(fp::to_float16(h) == 0x0001);
  CHECK(fp::to_float16(h / 2) == 0x0000);  // tie between 0 and 1: even is 0
  CHECK(fp::to_float16(std::nextafter(h / 2, 1.0)) == 0x0001);
  CHECK(fp::to_float16(1.5 * h) == 0x0002);     // tie between 1 and 2: even is 2
  CHECK(fp::to_float16(2.5 * h) == 0x0002);     // tie between 2 and 3: even is 2
  CHECK(fp::to_float16(1023.5 * h) == 0x0400);  // largest subnormal + half ulp: smallest normal
  CHECK(fp::to_float16(1022.5 * h) == 0x03FE);
  CHECK(fp::to_float16(-h / 4) == 0x8000);
  CHECK(fp::to_float16(std::numeric_limits<double>::denorm_min()) == 0x0000);
  CHECK(fp::to_float16(-std::numeric_limits<double>::denorm_min()) == 0x8000);
  CHECK(fp::to_float16(std::numeric_limits<double>::min()) == 0x0000);

  const double b = std::ldexp(1.0, -133);  // bfloat16's smallest subnormal
  CHECK(fp::to_bfloat16(b) == 0x0001);
  CHECK(fp::to_bfloat16(b / 2) == 0x0000);
  CHECK(fp::to_bfloat16(1.5 * b) == 0x0002);
  CHECK(fp::to_bfloat16(127.5 * b) == 0x0080);

  const double e4 = std::ldexp(1.0, -9);
  CHECK(fp::to_float8_e4m3(e4) == 0x01);
  CHECK(fp::to_float8_e4m3(e4 / 2) == 0x00);
  CHECK(fp::to_float8_e4m3(0.75 * e4) == 0x01);
  CHECK(fp::to_float8_e4m3(7.5 * e4) == 0x08);
  CHECK(fp::to_float8_e4m3(-0.25 * e4) == 0x80);

  const double e5 = std::ldexp(1.0, -16);
  CHECK(fp::to_float8_e5m2(e5) == 0x01);
  CHECK(fp::to_float8_e5m2(e5 / 2) == 0x00);
  CHECK(fp::to_float8_e5m2(3.5 * e5) == 0x04);
  CHECK(fp::to_float8_e5m2_ieee(-1.5 * e5) == 0x82);
}

TEST_CASE("signed zero is kept both ways", "[float_formats]") {
  for (const Format& f : formats()) {
    INFO(f.name);
    CHECK(f.encode(0.0) == 0);
    CHECK(f.encode(-0.0) == sign_bit(f));
    const double negative_zero = f.decode(sign_bit(f));
    CHECK(negative_zero == 0.0);
    CHECK(std::signbit(negative_zero));
    CHECK_FALSE(std::signbit(f.decode(0)));
  }
}
