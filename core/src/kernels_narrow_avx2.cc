// float16/bfloat16/fp8 reductions, 8 (fp8: 16) elements at a time with AVX2 and F16C.
//
// How it works. Only these functions are compiled for AVX2 (a target attribute; the rest of the
// build stays generic) and they run only when the CPU reports AVX2 and F16C. Per block of 8:
//   load   float16: vcvtph2ps;  bfloat16: 16 bits up into a float's top half;
//          e5m2: the byte is a float16's top byte, then vcvtph2ps;
//          e4m3: read as a float16 with another bias, vcvtph2ps, times 2^8;
//   op     vaddps / vmulps, or min/max as selects with the scalar Op's rules (-0 < +0);
//   store  float16: vcvtps2ph (round to nearest even); bfloat16: rounded on float's bits;
//          fp8: vcvtps2ph, then float16 -> fp8 rounding on 16-bit lanes (e4m3 scaled first).
// Rounding to float16 first and then to fp8 is the single rounding again: 11 >= 2*4+2 bits
// (the exhaustive fp8 test checks every pair of operands for every op).
// A block with a NaN result (or a NaN e4m3 input, whose decode here is not NaN) goes to the
// double reference path whole, so NaN bits are exactly that path's.
#include <cstdint>

#include "kernels_narrow.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

namespace twinccl::detail {
namespace {

// Each Lanes type reads 8 raw elements, decodes them to 8 floats, says which raw lanes are NaN
// where the decode cannot show it, and encodes 8 floats back.
[[gnu::target("avx2,f16c")]] __m128i read_16_bytes(const unsigned char* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i_u*>(p));
}
[[gnu::target("avx2,f16c")]] __m128i round_to_half(__m256 r) {
  return _mm256_cvtps_ph(r, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

// 16 float16 (two halves of 8) -> 16 fp8 bytes whose format keeps float16's bias and exponent field
// once the value was scaled, dropping `kDropBits` mantissa bits: round to nearest even (float16's
// subnormals are linear, so this holds across the subnormal boundary too), saturate at
// `kMaxFinite` (which catches float16's infinity as well), keep the sign.
template <int kDropBits, int kMaxFinite>
[[gnu::target("avx2,f16c")]] void store_fp8_from_halves(unsigned char* p, __m128i low,
                                                        __m128i high) {
  const __m256i half = _mm256_set_m128i(high, low);
  const __m256i magnitude = _mm256_and_si256(half, _mm256_set1_epi16(0x7FFF));
  const __m256i lowest_kept =
      _mm256_and_si256(_mm256_srli_epi16(magnitude, kDropBits), _mm256_set1_epi16(1));
  const __m256i half_minus_one = _mm256_set1_epi16((1 << (kDropBits - 1)) - 1);
  const __m256i rounded = _mm256_srli_epi16(
      _mm256_add_epi16(_mm256_add_epi16(magnitude, half_minus_one), lowest_kept), kDropBits);
  const __m256i saturated = _mm256_min_epu16(rounded, _mm256_set1_epi16(kMaxFinite));
  const __m256i sign = _mm256_and_si256(_mm256_srli_epi16(half, 8), _mm256_set1_epi16(0x80));
  const __m256i bytes16 = _mm256_or_si256(saturated, sign);
  _mm_storeu_si128(
      reinterpret_cast<__m128i_u*>(p),
      _mm_packus_epi16(_mm256_castsi256_si128(bytes16), _mm256_extracti128_si256(bytes16, 1)));
}

struct Float16Lanes {
  static constexpr std::size_t kBytes = 2;
  [[gnu::target("avx2,f16c")]] static __m128i read(const unsigned char* p) {
    return read_16_bytes(p);
  }
  [[gnu::target("avx2,f16c")]] static __m256 decode(__m128i raw) { return _mm256_cvtph_ps(raw); }
  [[gnu::target("avx2,f16c")]] static int nan_inputs(__m128i, __m128i) { return 0; }
  [[gnu::target("avx2,f16c")]] static void store(unsigned char* p, __m256 r) {
    _mm_storeu_si128(reinterpret_cast<__m128i_u*>(p), round_to_half(r));
  }
};

// bfloat16 is float's top half. Rounding float bits to nearest even by adding 0x7FFF plus the
// lowest kept bit is right for every non-NaN float: subnormals (both formats share float's
// exponent range, so the bits are linear there too) and overflow (the carry reaches 0x7F80, inf).
struct Bfloat16Lanes {
  static constexpr std::size_t kBytes = 2;
  [[gnu::target("avx2,f16c")]] static __m128i read(const unsigned char* p) {
    return read_16_bytes(p);
  }
  [[gnu::target("avx2,f16c")]] static __m256 decode(__m128i raw) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
  }
  [[gnu::target("avx2,f16c")]] static int nan_inputs(__m128i, __m128i) { return 0; }
  [[gnu::target("avx2,f16c")]] static void store(unsigned char* p, __m256 r) {
    const __m256i bits = _mm256_castps_si256(r);
    const __m256i lowest_kept = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(bits, _mm256_set1_epi32(0x7FFF)), lowest_kept), 16);
    _mm_storeu_si128(
        reinterpret_cast<__m128i_u*>(p),
        _mm_packus_epi32(_mm256_castsi256_si128(rounded), _mm256_extracti128_si256(rounded, 1)));
  }
};

// e5m2 is float16's top byte (same bias and exponent field).
struct Float8E5m2Lanes {
  static constexpr std::size_t kBytes = 1;
  [[gnu::target("avx2,f16c")]] static __m128i read(const unsigned char* p) {
    return read_16_bytes(p);
  }
  [[gnu::target("avx2,f16c")]] static __m256 decode(__m128i raw) {  // the low 8 bytes
    return _mm256_cvtph_ps(_mm_slli_epi16(_mm_cvtepu8_epi16(raw), 8));
  }
  [[gnu::target("avx2,f16c")]] static int nan_inputs(__m128i, __m128i) { return 0; }
  [[gnu::target("avx2,f16c")]] static void store(unsigned char* p, __m256 low, __m256 high) {
    store_fp8_from_halves<8, 0x7B>(p, round_to_half(low), round_to_half(high));
  }
};

// e4m3 has float16's fields with a bias of 7 instead of 15: its bits shifted up 7 read as a
// float16 of value / 2^8 (e4m3 subnormals become float16 subnormals), so decoding is vcvtph2ps
// then * 2^8, exact, with no float subnormal (which would cost vmulps a microcode assist).
// Encoding scales by 2^-8 (exact) so that float16's rounding lines up with e4m3's, subnormals
// included. Its NaN (0x7F, no infinity) would decode as 480, so NaN inputs are found on the bytes.
struct Float8E4m3Lanes {
  static constexpr std::size_t kBytes = 1;
  [[gnu::target("avx2,f16c")]] static __m128i read(const unsigned char* p) {
    return read_16_bytes(p);
  }
  [[gnu::target("avx2,f16c")]] static __m256 decode(__m128i raw) {  // the low 8 bytes
    // Sign-extended, << 7: a negative byte leaves bit 14 set as well as 15; the mask clears it.
    const __m128i half =
        _mm_and_si128(_mm_slli_epi16(_mm_cvtepi8_epi16(raw), 7), _mm_set1_epi16(-0x4001));
    return _mm256_mul_ps(_mm256_cvtph_ps(half), _mm256_set1_ps(256.0f));
  }
  [[gnu::target("avx2,f16c")]] static int nan_inputs(__m128i x, __m128i y) {
    const __m128i all_ones = _mm_set1_epi8(-1);
    const __m128i sign = _mm_set1_epi8(-0x80);
    const __m128i nan = _mm_or_si128(_mm_cmpeq_epi8(_mm_or_si128(x, sign), all_ones),
                                     _mm_cmpeq_epi8(_mm_or_si128(y, sign), all_ones));
    return _mm_movemask_epi8(nan);  // all 16 bytes
  }
  [[gnu::target("avx2,f16c")]] static void store(unsigned char* p, __m256 low, __m256 high) {
    const __m256 scale = _mm256_set1_ps(1.0f / 256.0f);
    store_fp8_from_halves<7, 0x7E>(p, round_to_half(_mm256_mul_ps(low, scale)),
                                   round_to_half(_mm256_mul_ps(high, scale)));
  }
};

struct SumLanes {
  [[gnu::target("avx2,f16c")]] static __m256 apply(__m256 a, __m256 b) {
    return _mm256_add_ps(a, b);
  }
};
struct ProdLanes {
  [[gnu::target("avx2,f16c")]] static __m256 apply(__m256 a, __m256 b) {
    return _mm256_mul_ps(a, b);
  }
};
// MinOp/MaxOp without NaN (a NaN result is sent to the reference): a strictly smaller (larger)
// operand wins; equal operands (only +-0 differ) give min -0, max +0.
struct MinLanes {
  [[gnu::target("avx2,f16c")]] static __m256 apply(__m256 a, __m256 b) {
    const __m256 a_negative = _mm256_castsi256_ps(_mm256_srai_epi32(_mm256_castps_si256(a), 31));
    const __m256 take_a = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ),
                                       _mm256_and_ps(_mm256_cmp_ps(a, b, _CMP_EQ_OQ), a_negative));
    return _mm256_blendv_ps(b, a, take_a);
  }
};
struct MaxLanes {
  [[gnu::target("avx2,f16c")]] static __m256 apply(__m256 a, __m256 b) {
    const __m256 a_negative = _mm256_castsi256_ps(_mm256_srai_epi32(_mm256_castps_si256(a), 31));
    const __m256 take_a =
        _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ),
                     _mm256_andnot_ps(a_negative, _mm256_cmp_ps(a, b, _CMP_EQ_OQ)));
    return _mm256_blendv_ps(b, a, take_a);
  }
};

// Blocks of 8 elements (16-bit types) or 16 (fp8: one 16-byte load, two halves of 8 floats).
template <typename Lanes, typename Op>
[[gnu::target("avx2,f16c")]] std::size_t run(void* dst, const void* a, const void* b,
                                             std::size_t count, ReferenceRun reference) {
  constexpr std::size_t kStep = Lanes::kBytes == 1 ? 16 : 8;
  auto* d = static_cast<unsigned char*>(dst);
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  const std::size_t blocks = count / kStep;
  for (std::size_t block = 0; block < blocks; ++block) {
    const std::size_t at = block * kStep * Lanes::kBytes;
    const __m128i raw_x = Lanes::read(x + at);
    const __m128i raw_y = Lanes::read(y + at);
    const __m256 r = Op::apply(Lanes::decode(raw_x), Lanes::decode(raw_y));
    int nan =
        _mm256_movemask_ps(_mm256_cmp_ps(r, r, _CMP_UNORD_Q)) | Lanes::nan_inputs(raw_x, raw_y);
    if constexpr (kStep == 16) {
      const __m256 r_high = Op::apply(Lanes::decode(_mm_unpackhi_epi64(raw_x, raw_x)),
                                      Lanes::decode(_mm_unpackhi_epi64(raw_y, raw_y)));
      nan |= _mm256_movemask_ps(_mm256_cmp_ps(r_high, r_high, _CMP_UNORD_Q));
      if (nan != 0) {
        reference(d + at, x + at, y + at, kStep);
      } else {
        Lanes::store(d + at, r, r_high);
      }
    } else {
      if (nan != 0) {
        reference(d + at, x + at, y + at, kStep);
      } else {
        Lanes::store(d + at, r);
      }
    }
  }
  return blocks * kStep;
}

template <typename Lanes>
std::size_t run_with_op(ReduceKind op, void* dst, const void* a, const void* b, std::size_t count,
                        ReferenceRun reference) {
  switch (op) {
    case ReduceKind::sum:
      return run<Lanes, SumLanes>(dst, a, b, count, reference);
    case ReduceKind::prod:
      return run<Lanes, ProdLanes>(dst, a, b, count, reference);
    case ReduceKind::min:
      return run<Lanes, MinLanes>(dst, a, b, count, reference);
    default:
      return run<Lanes, MaxLanes>(dst, a, b, count, reference);
  }
}

}  // namespace

std::size_t reduce_narrow_avx2(DataType type, ReduceKind op, void* dst, const void* a,
                               const void* b, std::size_t count, ReferenceRun reference) {
  switch (type) {
    case DataType::float16:
      return run_with_op<Float16Lanes>(op, dst, a, b, count, reference);
    case DataType::bfloat16:
      return run_with_op<Bfloat16Lanes>(op, dst, a, b, count, reference);
    case DataType::float8_e4m3:
      return run_with_op<Float8E4m3Lanes>(op, dst, a, b, count, reference);
    default:
      return run_with_op<Float8E5m2Lanes>(op, dst, a, b, count, reference);
  }
}

}  // namespace twinccl::detail

#else  // not x86: narrow_simd_available() is false and this is never called

namespace twinccl::detail {
std::size_t reduce_narrow_avx2(DataType, ReduceKind, void*, const void*, const void*, std::size_t,
                               ReferenceRun) {
  return 0;
}
}  // namespace twinccl::detail

#endif
