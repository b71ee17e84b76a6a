// reduce_elements / scale_elements / divide_elements / element access, against an independent
// per-element reference, over every data type, op, size (0, 1, odd, large) and aliasing mode.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "twinccl/errors.h"
#include "twinccl/float_formats.h"
#include "twinccl/reduce_kernels.h"

using twinccl::DataType;
using twinccl::ReduceKind;
namespace fp = twinccl::fp;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr ReduceKind kElementOps[] = {ReduceKind::sum, ReduceKind::prod, ReduceKind::min,
                                      ReduceKind::max};
constexpr std::size_t kCounts[] = {0, 1, 7, 1000, 4099, 65537};

bool is_signed_integer(DataType t) {
  return t == DataType::int8 || t == DataType::int32 || t == DataType::int64;
}
bool is_integer(DataType t) { return !twinccl::is_floating(t); }

// fmin/fmax with -0 < +0, the kernels' documented rule.
template <typename V>
V ref_min_max(ReduceKind op, V a, V b) {
  if (std::isnan(b)) return a;
  if (std::isnan(a)) return b;
  if (a == b) return (std::signbit(a) == (op == ReduceKind::min)) ? a : b;
  return op == ReduceKind::min ? (a < b ? a : b) : (a > b ? a : b);
}

template <typename V>
V ref_float_op(ReduceKind op, V a, V b) {
  if (op == ReduceKind::sum) return a + b;
  if (op == ReduceKind::prod) return a * b;
  return ref_min_max(op, a, b);
}

std::uint64_t load_bits(const unsigned char* p, std::size_t bytes) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, bytes);  // little endian
  return v;
}

std::int64_t sign_extend(std::uint64_t v, std::size_t bytes) {
  if (bytes == 8) return static_cast<std::int64_t>(v);
  const std::uint64_t sign = std::uint64_t{1} << (8 * bytes - 1);
  return static_cast<std::int64_t>((v ^ sign) - sign);
}

double narrow_decode(DataType t, std::uint64_t bits) {
  switch (t) {
    case DataType::float16:
      return fp::from_float16(static_cast<std::uint16_t>(bits));
    case DataType::bfloat16:
      return fp::from_bfloat16(static_cast<std::uint16_t>(bits));
    case DataType::float8_e4m3:
      return fp::from_float8_e4m3(static_cast<std::uint8_t>(bits));
    default:
      return fp::from_float8_e5m2(static_cast<std::uint8_t>(bits));
  }
}

std::uint64_t narrow_encode(DataType t, double x) {
  switch (t) {
    case DataType::float16:
      return fp::to_float16(x);
    case DataType::bfloat16:
      return fp::to_bfloat16(x);
    case DataType::float8_e4m3:
      return fp::to_float8_e4m3(x);
    default:
      return fp::to_float8_e5m2(x);
  }
}

// The expected bit pattern of a (op) b, element by element, without the kernels' code.
std::uint64_t reference(DataType t, ReduceKind op, std::uint64_t a, std::uint64_t b) {
  const std::size_t bytes = twinccl::size_of(t);
  if (is_integer(t)) {
    std::uint64_t r = 0;
    if (op == ReduceKind::sum) r = a + b;
    if (op == ReduceKind::prod) r = a * b;
    if (op == ReduceKind::min || op == ReduceKind::max) {
      const bool a_less =
          is_signed_integer(t) ? sign_extend(a, bytes) < sign_extend(b, bytes) : a < b;
      r = (a_less == (op == ReduceKind::min)) ? a : b;
    }
    return bytes == 8 ? r : r & ((std::uint64_t{1} << (8 * bytes)) - 1);
  }
  if (t == DataType::float32) {
    float x = 0, y = 0;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    const float r = ref_float_op(op, x, y);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &r, 4);
    return bits;
  }
  if (t == DataType::float64) {
    double x = 0, y = 0;
    std::memcpy(&x, &a, 8);
    std::memcpy(&y, &b, 8);
    const double r = ref_float_op(op, x, y);
    std::uint64_t bits = 0;
    std::memcpy(&bits, &r, 8);
    return bits;
  }
  const double x = narrow_decode(t, a), y = narrow_decode(t, b);
  // Sum and product of narrow floats: a NaN operand is the result, the first one when both are
  // (its sign kept by the encode), whatever order the compiler gives the hardware's operands.
  if ((op == ReduceKind::sum || op == ReduceKind::prod) && (x != x || y != y)) {
    return narrow_encode(t, x != x ? x : y);
  }
  return narrow_encode(t, ref_float_op(op, x, y));
}

// Random elements: any bit pattern for integers and narrow floats (NaN/inf/subnormals included),
// varied magnitudes with a few specials for float32/float64.
std::vector<unsigned char> random_elements(DataType t, std::size_t count, std::mt19937_64& rng) {
  const std::size_t bytes = twinccl::size_of(t);
  std::vector<unsigned char> data(count * bytes);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint64_t bits = rng();
    if (t == DataType::float32 || t == DataType::float64) {
      const double specials[] = {0.0, -0.0, kInf, -kInf, kNan, 1.0, -1.0};
      double v = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng),
                            static_cast<int>(rng() % 40) - 20);
      if (rng() % 16 == 0) v = specials[rng() % 7];
      if (t == DataType::float32) {
        const float f = static_cast<float>(v);
        std::memcpy(&bits, &f, 4);
      } else {
        std::memcpy(&bits, &v, 8);
      }
    }
    std::memcpy(data.data() + i * bytes, &bits, bytes);
  }
  return data;
}

enum class Aliasing { distinct, dst_is_a, dst_is_b, a_is_b, unaligned };
constexpr Aliasing kAliasings[] = {Aliasing::distinct, Aliasing::dst_is_a, Aliasing::dst_is_b,
                                   Aliasing::a_is_b, Aliasing::unaligned};

}  // namespace

TEST_CASE("reduce_elements matches the per-element reference for every type op size and aliasing",
          "[reduce_kernels]") {
  std::mt19937_64 rng(20240611);
  for (DataType t : twinccl::kAllDataTypes) {
    const std::size_t bytes = twinccl::size_of(t);
    for (ReduceKind op : kElementOps) {
      for (std::size_t count : kCounts) {
        for (Aliasing aliasing : kAliasings) {
          INFO(twinccl::name(t) << " " << twinccl::name(op) << " count " << count << " aliasing "
                                << static_cast<int>(aliasing));
          const auto a = random_elements(t, count, rng);
          const auto b = aliasing == Aliasing::a_is_b ? a : random_elements(t, count, rng);
          std::vector<unsigned char> expected(count * bytes);
          for (std::size_t i = 0; i < count; ++i) {
            const std::uint64_t r =
                reference(t, op, load_bits(&a[i * bytes], bytes), load_bits(&b[i * bytes], bytes));
            std::memcpy(&expected[i * bytes], &r, bytes);
          }
          // Three buffers at offset 1 byte when unaligned, else at offset 0.
          const std::size_t offset = aliasing == Aliasing::unaligned ? 1 : 0;
          std::vector<unsigned char> buf_a(count * bytes + 8), buf_b(count * bytes + 8),
              buf_d(count * bytes + 8, 0xAB);
          std::copy(a.begin(), a.end(), buf_a.begin() + static_cast<std::ptrdiff_t>(offset));
          std::copy(b.begin(), b.end(), buf_b.begin() + static_cast<std::ptrdiff_t>(offset));
          unsigned char* pa = buf_a.data() + offset;
          unsigned char* pb = buf_b.data() + offset;
          unsigned char* pd = buf_d.data() + offset;
          if (aliasing == Aliasing::dst_is_a) pd = pa;
          if (aliasing == Aliasing::dst_is_b) pd = pb;
          if (aliasing == Aliasing::a_is_b) pb = pa;
          twinccl::reduce_elements(t, op, pd, pa, pb, count);
          std::size_t wrong = 0;
          for (std::size_t i = 0; i < count * bytes; ++i) wrong += pd[i] != expected[i] ? 1 : 0;
          CHECK(wrong == 0);
          if (aliasing == Aliasing::distinct) {
            CHECK(buf_d[count * bytes] == 0xAB);  // nothing written past the end
          }
        }
      }
    }
  }
}

TEST_CASE("integers wrap around on overflow", "[reduce_kernels]") {
  std::int8_t a8[] = {127, -128, 100}, b8[] = {1, -1, 100}, r8[3];
  twinccl::reduce_elements(DataType::int8, ReduceKind::sum, r8, a8, b8, 3);
  CHECK(r8[0] == -128);
  CHECK(r8[1] == 127);
  CHECK(r8[2] == -56);
  std::uint8_t u8a[] = {200}, u8b[] = {2}, u8r[1];
  twinccl::reduce_elements(DataType::uint8, ReduceKind::prod, u8r, u8a, u8b, 1);
  CHECK(u8r[0] == 144);
  std::int32_t i32a[] = {std::numeric_limits<std::int32_t>::max()}, i32b[] = {1};
  twinccl::reduce_elements(DataType::int32, ReduceKind::sum, i32a, i32a, i32b, 1);
  CHECK(i32a[0] == std::numeric_limits<std::int32_t>::min());
  std::int64_t i64a[] = {std::int64_t{1} << 62}, i64b[] = {4};
  twinccl::reduce_elements(DataType::int64, ReduceKind::prod, i64a, i64a, i64b, 1);
  CHECK(i64a[0] == 0);
  std::uint64_t u64a[] = {0}, u64b[] = {1};
  twinccl::reduce_elements(DataType::uint64, ReduceKind::min, u64a, u64a, u64b, 1);
  CHECK(u64a[0] == 0);
  std::int32_t i32c[] = {-5}, i32d[] = {3};
  twinccl::reduce_elements(DataType::int32, ReduceKind::min, i32c, i32c, i32d, 1);
  CHECK(i32c[0] == -5);
}

TEST_CASE("float min and max follow fmin/fmax: NaN loses to a number", "[reduce_kernels]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const float a[] = {nan, 1.0f, nan, -0.0f, 0.0f, 2.0f};
  const float b[] = {3.0f, nan, nan, 0.0f, -0.0f, -inf};
  float mn[6], mx[6];
  twinccl::reduce_elements(DataType::float32, ReduceKind::min, mn, a, b, 6);
  twinccl::reduce_elements(DataType::float32, ReduceKind::max, mx, a, b, 6);
  CHECK(mn[0] == 3.0f);
  CHECK(mx[0] == 3.0f);
  CHECK(mn[1] == 1.0f);
  CHECK(mx[1] == 1.0f);
  CHECK(std::isnan(mn[2]));
  CHECK(std::isnan(mx[2]));
  CHECK((mn[3] == 0.0f && std::signbit(mn[3])));  // -0 < +0, whatever the operand order
  CHECK((mn[4] == 0.0f && std::signbit(mn[4])));
  CHECK((mx[3] == 0.0f && !std::signbit(mx[3])));
  CHECK((mx[4] == 0.0f && !std::signbit(mx[4])));
  CHECK(mn[5] == -inf);
  CHECK(mx[5] == 2.0f);
}

TEST_CASE("narrow floats round once per call and fp8 sums saturate", "[reduce_kernels]") {
  auto h = [](double x) { return fp::to_float16(x); };
  const std::uint16_t ha[] = {h(2048), h(2048), h(65504), h(0.1), h(-65504)};
  const std::uint16_t hb[] = {h(1), h(3), h(65504), h(0.2), h(-65504)};
  std::uint16_t hr[5];
  twinccl::reduce_elements(DataType::float16, ReduceKind::sum, hr, ha, hb, 5);
  CHECK(fp::from_float16(hr[0]) == 2048.0);  // 2049 is a tie: even is 2048
  CHECK(fp::from_float16(hr[1]) == 2052.0);  // 2051 is a tie: even is 2052
  CHECK(hr[2] == 0x7C00);                    // float16 overflows to inf
  CHECK(hr[3] == h(fp::from_float16(h(0.1)) + fp::from_float16(h(0.2))));
  CHECK(hr[4] == 0xFC00);
  const std::uint16_t ba[] = {fp::to_bfloat16(256)}, bb[] = {fp::to_bfloat16(1)};
  std::uint16_t br[1];
  twinccl::reduce_elements(DataType::bfloat16, ReduceKind::sum, br, ba, bb, 1);
  CHECK(fp::from_bfloat16(br[0]) == 256.0);
  const std::uint8_t e4[] = {fp::to_float8_e4m3(448), fp::to_float8_e4m3(-448)};
  std::uint8_t e4r[2];
  twinccl::reduce_elements(DataType::float8_e4m3, ReduceKind::sum, e4r, e4, e4, 2);
  CHECK(e4r[0] == 0x7E);
  CHECK(e4r[1] == 0xFE);
  twinccl::reduce_elements(DataType::float8_e4m3, ReduceKind::prod, e4r, e4, e4, 2);
  CHECK(e4r[0] == 0x7E);
  CHECK(e4r[1] == 0x7E);
  const std::uint8_t e5[] = {fp::to_float8_e5m2(57344), 0x7C /* +inf */};
  std::uint8_t e5r[2];
  twinccl::reduce_elements(DataType::float8_e5m2, ReduceKind::sum, e5r, e5, e5, 2);
  CHECK(e5r[0] == 0x7B);
  CHECK(e5r[1] == 0x7B);
}

TEST_CASE("reduce_elements rejects ops and types it does not handle", "[reduce_kernels]") {
  float x[1] = {1.0f};
  CHECK_THROWS_AS(twinccl::reduce_elements(DataType::float32, ReduceKind::avg, x, x, x, 1),
                  twinccl::InvalidArgument);
  CHECK_THROWS_AS(twinccl::reduce_elements(DataType::float32, ReduceKind::premul_sum, x, x, x, 1),
                  twinccl::InvalidArgument);
  try {
    twinccl::reduce_elements(static_cast<DataType>(99), ReduceKind::sum, x, x, x, 1);
    FAIL("no exception");
  } catch (const twinccl::InvalidArgument& e) {
    CHECK(std::string(e.what()).find("reduce_elements") != std::string::npos);
    CHECK(std::string(e.what()).find("99") != std::string::npos);
  }
  try {
    twinccl::reduce_elements(DataType::float32, static_cast<ReduceKind>(17), x, x, x, 1);
    FAIL("no exception");
  } catch (const twinccl::InvalidArgument& e) {
    CHECK(std::string(e.what()).find("17") != std::string::npos);
  }
  CHECK_THROWS_AS(twinccl::reduce_elements(DataType::float32, ReduceKind::sum, nullptr, x, x, 1),
                  twinccl::InvalidArgument);
  CHECK_NOTHROW(
      twinccl::reduce_elements(DataType::float32, ReduceKind::sum, nullptr, nullptr, nullptr, 0));
}

TEST_CASE("scale_elements converts the scalar to the type then rounds each product once",
          "[reduce_kernels]") {
  for (std::size_t count : kCounts) {
    INFO("count " << count);
    std::mt19937_64 rng(count);
    // float16: the scalar 1/3 is first rounded to float16.
    const auto src16 = random_elements(DataType::float16, count, rng);
    std::vector<std::uint16_t> in16(count), out16(count);
    if (count != 0) std::memcpy(in16.data(), src16.data(), src16.size());
    twinccl::scale_elements(DataType::float16, 1.0 / 3, out16.data(), in16.data(), count);
    const double third16 = fp::from_float16(fp::to_float16(1.0 / 3));
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint16_t want = fp::to_float16(fp::from_float16(in16[i]) * third16);
      wrong += (out16[i] != want &&
                !(std::isnan(fp::from_float16(want)) && std::isnan(fp::from_float16(out16[i]))))
                   ? 1
                   : 0;
    }
    CHECK(wrong == 0);
    // float32 in place: the scalar is float(0.1), the product a float product.
    std::vector<float> f(count);
    for (std::size_t i = 0; i < count; ++i) f[i] = static_cast<float>(i) - 3.5f;
    twinccl::scale_elements(DataType::float32, 0.1, f.data(), f.data(), count);
    wrong = 0;
    for (std::size_t i = 0; i < count; ++i) {
      wrong += f[i] != (static_cast<float>(i) - 3.5f) * 0.1f ? 1 : 0;
    }
    CHECK(wrong == 0);
    // int32: integer products wrap.
    std::vector<std::int32_t> v(count);
    for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<std::int32_t>(i * 1000003);
    std::vector<std::int32_t> w(count);
    twinccl::scale_elements(DataType::int32, -7, w.data(), v.data(), count);
    wrong = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const auto want = static_cast<std::int32_t>(static_cast<std::uint32_t>(v[i]) *
                                                  static_cast<std::uint32_t>(-7));
      wrong += w[i] != want ? 1 : 0;
    }
    CHECK(wrong == 0);
  }
  std::uint8_t e4[] = {fp::to_float8_e4m3(300)};
  twinccl::scale_elements(DataType::float8_e4m3, 4.0, e4, e4, 1);
  CHECK(e4[0] == 0x7E);  // saturates
  double d[] = {3.0};
  twinccl::scale_elements(DataType::float64, 0.5, d, d, 1);
  CHECK(d[0] == 1.5);
  std::int64_t i64[] = {5};
  CHECK_THROWS_AS(twinccl::scale_elements(DataType::int64, kNan, i64, i64, 1),
                  twinccl::InvalidArgument);
  CHECK_THROWS_AS(twinccl::scale_elements(static_cast<DataType>(12), 1.0, d, d, 1),
                  twinccl::InvalidArgument);
}

TEST_CASE("divide_elements truncates toward zero and only takes integer types",
          "[reduce_kernels]") {
  std::int32_t i32[] = {-7, 7, -1, 0, std::numeric_limits<std::int32_t>::min()};
  twinccl::divide_elements(DataType::int32, 2, i32, i32, 5);
  CHECK(i32[0] == -3);
  CHECK(i32[1] == 3);
  CHECK(i32[2] == 0);
  CHECK(i32[3] == 0);
  CHECK(i32[4] == std::numeric_limits<std::int32_t>::min() / 2);
  std::uint8_t u8[] = {255, 3}, u8r[2];
  twinccl::divide_elements(DataType::uint8, 4, u8r, u8, 2);
  CHECK(u8r[0] == 63);
  CHECK(u8r[1] == 0);
  std::uint64_t u64[] = {std::numeric_limits<std::uint64_t>::max()};
  twinccl::divide_elements(DataType::uint64, 3, u64, u64, 1);
  CHECK(u64[0] == std::numeric_limits<std::uint64_t>::max() / 3);
  std::int8_t i8[] = {-128};
  twinccl::divide_elements(DataType::int8, 16, i8, i8, 1);
  CHECK(i8[0] == -8);
  std::int64_t i64[] = {std::numeric_limits<std::int64_t>::min()};
  twinccl::divide_elements(DataType::int64, 7, i64, i64, 1);
  CHECK(i64[0] == std::numeric_limits<std::int64_t>::min() / 7);
  float f[] = {1.0f};
  CHECK_THROWS_AS(twinccl::divide_elements(DataType::float32, 2, f, f, 1),
                  twinccl::InvalidArgument);
  CHECK_THROWS_AS(twinccl::divide_elements(DataType::int32, 0, i32, i32, 1),
                  twinccl::InvalidArgument);
  CHECK_THROWS_AS(twinccl::divide_elements(DataType::int32, -3, i32, i32, 1),
                  twinccl::InvalidArgument);
  CHECK_THROWS_AS(twinccl::divide_elements(static_cast<DataType>(200), 2, i32, i32, 1),
                  twinccl::InvalidArgument);
}

TEST_CASE("element_as_double and store_element read and write one element", "[reduce_kernels]") {
  for (DataType t : twinccl::kAllDataTypes) {
    INFO(twinccl::name(t));
    std::vector<unsigned char> buf(3 * twinccl::size_of(t), 0);
    for (double v : {0.0, 1.0, -2.0, 3.0, 96.0}) {  // exact in every type
      if (v < 0 && (t == DataType::uint8 || t == DataType::uint32 || t == DataType::uint64)) {
        continue;
      }
      twinccl::store_element(t, buf.data(), 2, v);
      CHECK(twinccl::element_as_double(t, buf.data(), 2) == v);
      CHECK(twinccl::element_as_double(t, buf.data(), 0) == 0.0);
    }
  }
  std::int8_t i8[1];
  twinccl::store_element(DataType::int8, i8, 0, 300.0);
  CHECK(i8[0] == 44);  // wrapped
  twinccl::store_element(DataType::int8, i8, 0, -3.9);
  CHECK(i8[0] == -3);  // truncated
  std::uint32_t u32[1];
  twinccl::store_element(DataType::uint32, u32, 0, -1.0);
  CHECK(u32[0] == 4294967295u);
  std::uint64_t u64[1];
  twinccl::store_element(DataType::uint64, u64, 0, 18446744073709551616.0 + 4096.0);
  CHECK(u64[0] == 4096);
  std::int64_t i64[1];
  twinccl::store_element(DataType::int64, i64, 0, -9223372036854775808.0);
  CHECK(i64[0] == std::numeric_limits<std::int64_t>::min());
  CHECK_THROWS_AS(twinccl::store_element(DataType::int32, u32, 0, kNan), twinccl::InvalidArgument);
  CHECK_THROWS_AS(twinccl::store_element(DataType::uint8, u32, 0, kInf), twinccl::InvalidArgument);
  float f[1];
  twinccl::store_element(DataType::float32, f, 0, 1e300);
  CHECK(f[0] == std::numeric_limits<float>::infinity());
  twinccl::store_element(DataType::float32, f, 0, -1e-300);
  CHECK((f[0] == 0.0f && std::signbit(f[0])));
  twinccl::store_element(DataType::float32, f, 0, 0.1);
  CHECK(f[0] == 0.1f);
  std::uint16_t h[1];
  twinccl::store_element(DataType::float16, h, 0, 0.1);
  CHECK(h[0] == 0x2E66);
  CHECK(twinccl::element_as_double(DataType::float16, h, 0) == fp::from_float16(0x2E66));
  std::uint8_t e5[1];
  twinccl::store_element(DataType::float8_e5m2, e5, 0, 1e6);
  CHECK(e5[0] == 0x7B);
  CHECK_THROWS_AS(twinccl::element_as_double(static_cast<DataType>(255), h, 0),
                  twinccl::InvalidArgument);
  CHECK_THROWS_AS(twinccl::store_element(static_cast<DataType>(255), h, 0, 1.0),
                  twinccl::InvalidArgument);
}
