// The float16/bfloat16/fp8 float kernels (simd and portable) against the per-element double path
// they replaced (NarrowKernel::via_double, kept as the reference): bit for bit, NaN included.
// fp8: every pair of operands, every op. float16/bfloat16: every pattern against a set of
// special and boundary values, every pattern against operands chosen to land next to rounding
// ties, and random pairs; a hidden [exhaustive] test runs all 2^32 pairs for sum and prod.
#include <algorithm>
#include <catch2/catch.hpp>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "twinccl/reduce_kernels.h"

using twinccl::DataType;
using twinccl::NarrowKernel;
using twinccl::ReduceKind;

namespace {

constexpr ReduceKind kOps[] = {ReduceKind::sum, ReduceKind::prod, ReduceKind::min, ReduceKind::max};
constexpr NarrowKernel kFastKernels[] = {NarrowKernel::simd, NarrowKernel::portable};

std::string kernel_name(NarrowKernel k) {
  return k == NarrowKernel::simd ? "simd" : k == NarrowKernel::portable ? "portable" : "other";
}

// Elements as 16-bit patterns; fp8 uses the low byte.
struct Operands {
  std::vector<std::uint16_t> a;
  std::vector<std::uint16_t> b;
};

std::vector<unsigned char> to_bytes(DataType t, const std::vector<std::uint16_t>& v) {
  const std::size_t bytes = twinccl::size_of(t);
  std::vector<unsigned char> out(v.size() * bytes);
  for (std::size_t i = 0; i < v.size(); ++i) std::memcpy(&out[i * bytes], &v[i], bytes);
  return out;
}

// Counts the elements where `kernel` differs from via_double, for dst distinct and dst == a;
// reports the first difference.
std::size_t mismatches(DataType t, ReduceKind op, NarrowKernel kernel, const Operands& in) {
  const std::size_t count = in.a.size();
  const auto a = to_bytes(t, in.a);
  const auto b = to_bytes(t, in.b);
  std::vector<unsigned char> expected(a.size()), got(a.size());
  twinccl::reduce_elements_with(NarrowKernel::via_double, t, op, expected.data(), a.data(),
                                b.data(), count);
  twinccl::reduce_elements_with(kernel, t, op, got.data(), a.data(), b.data(), count);
  auto in_place = a;
  twinccl::reduce_elements_with(kernel, t, op, in_place.data(), in_place.data(), b.data(), count);
  const std::size_t bytes = twinccl::size_of(t);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const bool differs = std::memcmp(&got[i * bytes], &expected[i * bytes], bytes) != 0 ||
                         std::memcmp(&in_place[i * bytes], &expected[i * bytes], bytes) != 0;
    if (differs && wrong++ == 0) {
      std::uint16_t e = 0, g = 0, p = 0;
      std::memcpy(&e, &expected[i * bytes], bytes);
      std::memcpy(&g, &got[i * bytes], bytes);
      std::memcpy(&p, &in_place[i * bytes], bytes);
      UNSCOPED_INFO(twinccl::name(t)
                    << " " << twinccl::name(op) << " " << kernel_name(kernel) << ": a=0x"
                    << std::hex << in.a[i] << " b=0x" << in.b[i] << " expected 0x" << e << " got 0x"
                    << g << " in place 0x" << p);
    }
  }
  return wrong;
}

// float16/bfloat16 values where rounding, overflow or specials change behaviour.
std::vector<std::uint16_t> boundary_values(DataType t) {
  std::vector<std::uint16_t> v;
  const bool half = t == DataType::float16;
  const std::uint16_t inf = half ? 0x7C00 : 0x7F80;
  const std::uint16_t max_finite = half ? 0x7BFF : 0x7F7F;
  const std::uint16_t min_normal = half ? 0x0400 : 0x0080;
  const std::uint16_t one = half ? 0x3C00 : 0x3F80;
  const std::uint16_t magnitudes[] = {0,
                                      1,
                                      2,
                                      3,
                                      static_cast<std::uint16_t>(min_normal - 1),
                                      min_normal,
                                      static_cast<std::uint16_t>(min_normal + 1),
                                      static_cast<std::uint16_t>(one - 1),
                                      one,
                                      static_cast<std::uint16_t>(one + 1),
                                      static_cast<std::uint16_t>(max_finite - 1),
                                      max_finite,
                                      inf,
                                      static_cast<std::uint16_t>(inf + 1),
                                      static_cast<std::uint16_t>(inf | 0x40),
                                      0x7FFF};
  for (std::uint16_t m : magnitudes) {
    v.push_back(m);
    v.push_back(static_cast<std::uint16_t>(m | 0x8000));
  }
  return v;
}

int mantissa_bits(DataType t) { return t == DataType::float16 ? 10 : 7; }

}  // namespace

TEST_CASE("fp8 float kernels equal the double path for every pair of operands and every op",
          "[narrow_kernels]") {
  Operands all;
  for (std::uint32_t x = 0; x < 256; ++x) {
    for (std::uint32_t y = 0; y < 256; ++y) {
      all.a.push_back(static_cast<std::uint16_t>(x));
      all.b.push_back(static_cast<std::uint16_t>(y));
    }
  }
  for (DataType t : {DataType::float8_e4m3, DataType::float8_e5m2}) {
    for (ReduceKind op : kOps) {
      for (NarrowKernel kernel : kFastKernels) CHECK(mismatches(t, op, kernel, all) == 0);
    }
  }
}

TEST_CASE(
    "float16 and bfloat16 float kernels equal the double path on every pattern against "
    "boundary values",
    "[narrow_kernels]") {
  for (DataType t : {DataType::float16, DataType::bfloat16}) {
    Operands in;
    for (std::uint16_t special : boundary_values(t)) {
      for (std::uint32_t x = 0; x < 65536; ++x) {
        in.a.push_back(static_cast<std::uint16_t>(x));
        in.b.push_back(special);
        in.a.push_back(special);  // and the other way round
        in.b.push_back(static_cast<std::uint16_t>(x));
      }
    }
    for (ReduceKind op : kOps) {
      for (NarrowKernel kernel : kFastKernels) CHECK(mismatches(t, op, kernel, in) == 0);
    }
  }
}

TEST_CASE("float16 and bfloat16 float kernels equal the double path next to rounding ties",
          "[narrow_kernels]") {
  // For every pattern a: operands b a few binades below a (their sum's low bits fall around the
  // rounding point), in a's binade (cancellation), and products with short significands whose
  // exact product sits on or next to a tie.
  std::mt19937 rng(20261122);
  for (DataType t : {DataType::float16, DataType::bfloat16}) {
    const int m = mantissa_bits(t);
    const int exponent_shift = m;
    Operands in;
    for (std::uint32_t x = 0; x < 65536; ++x) {
      const auto a = static_cast<std::uint16_t>(x);
      const int exponent = (a & 0x7FFF) >> m;
      for (int k = 0; k < 12; ++k) {
        const int below = k < 8 ? m - 2 + static_cast<int>(rng() % 6) : 0;
        const int e = exponent - below;
        if (e < 0) continue;
        const auto mantissa = static_cast<std::uint16_t>(rng() & ((1u << m) - 1));
        const auto sign = static_cast<std::uint16_t>((rng() & 1) << 15);
        in.a.push_back(a);
        in.b.push_back(static_cast<std::uint16_t>(sign | (e << exponent_shift) | mantissa));
      }
    }
    for (int i = 0; i < 2'000'000; ++i) {  // random pairs of any patterns
      in.a.push_back(static_cast<std::uint16_t>(rng()));
      in.b.push_back(static_cast<std::uint16_t>(rng()));
    }
    for (ReduceKind op : kOps) {
      for (NarrowKernel kernel : kFastKernels) CHECK(mismatches(t, op, kernel, in) == 0);
    }
  }
}

TEST_CASE("narrow float kernels handle short tails, odd offsets and a == b like the double path",
          "[narrow_kernels]") {
  std::mt19937 rng(7);
  for (DataType t :
       {DataType::float16, DataType::bfloat16, DataType::float8_e4m3, DataType::float8_e5m2}) {
    const std::size_t bytes = twinccl::size_of(t);
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8},
                              std::size_t{9}, std::size_t{23}, std::size_t{1000}}) {
      for (ReduceKind op : kOps) {
        std::vector<unsigned char> a(count * bytes + 1), b(count * bytes + 1);
        for (auto& byte : a) byte = static_cast<unsigned char>(rng());
        for (auto& byte : b) byte = static_cast<unsigned char>(rng());
        std::vector<unsigned char> expected(count * bytes + 1, 0xCD);
        // Odd byte offsets: 16-bit elements not aligned to their size.
        twinccl::reduce_elements_with(NarrowKernel::via_double, t, op, expected.data() + 1,
                                      a.data() + 1, b.data() + 1, count);
        std::vector<unsigned char> twice(count * bytes + 1, 0xCD);
        twinccl::reduce_elements_with(NarrowKernel::via_double, t, op, twice.data(), a.data(),
                                      a.data(), count);
        for (NarrowKernel kernel : kFastKernels) {
          INFO(twinccl::name(t) << " " << twinccl::name(op) << " " << kernel_name(kernel)
                                << " count " << count);
          std::vector<unsigned char> got(count * bytes + 1, 0xCD);
          twinccl::reduce_elements_with(kernel, t, op, got.data() + 1, a.data() + 1, b.data() + 1,
                                        count);
          CHECK(got == expected);  // byte 0 untouched (0xCD) in both
          std::vector<unsigned char> same(count * bytes + 1, 0xCD);
          twinccl::reduce_elements_with(kernel, t, op, same.data(), a.data(), a.data(), count);
          CHECK(same == twice);
        }
      }
    }
  }
}

TEST_CASE("reduce_elements uses the float kernels and says whether SIMD is available",
          "[narrow_kernels]") {
  // 0x3C00 + 0x1400 (1 + 2^-10) is 0x3C01 whichever kernel runs; the best kernel is the default.
  const std::uint16_t a[9] = {0x3C00, 0x3C00, 0x3C00, 0x3C00, 0x3C00,
                              0x3C00, 0x3C00, 0x3C00, 0x3C00};
  const std::uint16_t b[9] = {0x1400, 0x1400, 0x1400, 0x1400, 0x1400,
                              0x1400, 0x1400, 0x1400, 0x1400};
  std::uint16_t d[9] = {};
  twinccl::reduce_elements(DataType::float16, ReduceKind::sum, d, a, b, 9);
  for (std::uint16_t x : d) CHECK(x == 0x3C01);
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  CHECK(twinccl::narrow_simd_available() == (__builtin_cpu_supports("avx2") && f16c));
#endif
}

TEST_CASE("float16 and bfloat16 sum and prod equal the double path for all 2^32 pairs",
          "[.][exhaustive][narrow_kernels]") {
  // Hidden (about 10 minutes): run by hand with `tests_core "[exhaustive]"`.
  for (DataType t : {DataType::float16, DataType::bfloat16}) {
    for (ReduceKind op : {ReduceKind::sum, ReduceKind::prod}) {
      std::size_t wrong = 0;
      Operands in;
      in.a.resize(65536);
      in.b.resize(65536);
      for (std::uint32_t y = 0; y < 65536; ++y) in.b[y] = static_cast<std::uint16_t>(y);
      for (std::uint32_t x = 0; x < 65536 && wrong == 0; ++x) {
        std::fill(in.a.begin(), in.a.end(), static_cast<std::uint16_t>(x));
        wrong += mismatches(t, op, NarrowKernel::simd, in);
      }
      CHECK(wrong == 0);
    }
  }
}
