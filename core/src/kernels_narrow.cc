// float16/bfloat16/fp8 reductions in float: the dispatcher and the portable scalar kernel.
//
// How it works. reduce_narrow picks AVX2 when the CPU has it (asked once, at run time; the build
// never assumes it) for the whole multiple of 8 (fp8: 16), then the portable kernel for the tail.
// The portable kernel decodes both operands to float on bits (kernels_narrow_float.h), combines
// them with the same Op as the double path, and encodes once, 16 elements at a time with no branch
// so that it vectorizes for the build's baseline; a block with a NaN result goes to the reference.
//   float16 sum, a = 0x3C00 (1.0), b = 0x1400 (2^-10): 1.0f + 0.0009765625f = 1.0009765625f,
//   encoded 0x3C01, the value the double path rounds to as well.
#include "kernels_narrow.h"

#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "kernels_elements.h"
#include "kernels_narrow_float.h"

namespace twinccl::detail {
namespace {

// Blocks of kBlock elements, each step a loop without branches (the compiler may vectorize them
// with whatever the build's baseline ISA has); a block with a NaN result goes to the reference.
template <typename Bits, const NarrowFloat& kFormat, typename Op>
void portable_run(void* dst, const void* a, const void* b, std::size_t count,
                  ReferenceRun reference) {
  constexpr std::size_t kBlock = 16;
  auto* d = static_cast<unsigned char*>(dst);
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  for (std::size_t start = 0; start < count; start += kBlock) {
    const std::size_t n = count - start < kBlock ? count - start : kBlock;
    const std::size_t at = start * sizeof(Bits);
    Bits xs[kBlock] = {};
    Bits ys[kBlock] = {};
    std::memcpy(xs, x + at, n * sizeof(Bits));
    std::memcpy(ys, y + at, n * sizeof(Bits));
    float r[kBlock];
    for (std::size_t j = 0; j < kBlock; ++j) {
      r[j] = Op::apply(kFormat.decode(xs[j]), kFormat.decode(ys[j]));
    }
    bool nan = false;
    for (std::size_t j = 0; j < kBlock; ++j) nan |= r[j] != r[j];
    if (nan) {
      reference(d + at, x + at, y + at, n);
      continue;
    }
    Bits out[kBlock];
    for (std::size_t j = 0; j < kBlock; ++j) out[j] = static_cast<Bits>(kFormat.encode(r[j]));
    std::memcpy(d + at, out, n * sizeof(Bits));
  }
}

template <typename Bits, const NarrowFloat& kFormat>
void portable_with_op(ReduceKind op, void* dst, const void* a, const void* b, std::size_t count,
                      ReferenceRun reference) {
  switch (op) {
    case ReduceKind::sum:
      return portable_run<Bits, kFormat, SumOp>(dst, a, b, count, reference);
    case ReduceKind::prod:
      return portable_run<Bits, kFormat, ProdOp>(dst, a, b, count, reference);
    case ReduceKind::min:
      return portable_run<Bits, kFormat, MinOp>(dst, a, b, count, reference);
    default:
      return portable_run<Bits, kFormat, MaxOp>(dst, a, b, count, reference);
  }
}

// AVX2 through the compiler (which also checks that the OS saves the AVX registers), F16C through
// cpuid (leaf 1, ecx bit 29): clang 14's __builtin_cpu_supports does not know "f16c".
bool cpu_has_avx2_f16c() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  return __builtin_cpu_supports("avx2") && f16c;
#else
  return false;
#endif
}

}  // namespace

void reduce_narrow_portable(DataType type, ReduceKind op, void* dst, const void* a, const void* b,
                            std::size_t count, ReferenceRun reference) {
  switch (type) {
    case DataType::float16:
      return portable_with_op<std::uint16_t, kFloat16Float>(op, dst, a, b, count, reference);
    case DataType::bfloat16:
      return portable_with_op<std::uint16_t, kBfloat16Float>(op, dst, a, b, count, reference);
    case DataType::float8_e4m3:
      return portable_with_op<std::uint8_t, kFloat8E4m3Float>(op, dst, a, b, count, reference);
    default:
      return portable_with_op<std::uint8_t, kFloat8E5m2Float>(op, dst, a, b, count, reference);
  }
}

void reduce_narrow(NarrowKernel kernel, DataType type, ReduceKind op, void* dst, const void* a,
                   const void* b, std::size_t count, ReferenceRun reference) {
  std::size_t done = 0;
  if (kernel != NarrowKernel::portable && narrow_simd_available()) {
    done = reduce_narrow_avx2(type, op, dst, a, b, count, reference);
  }
  if (done == count) return;
  const std::size_t offset = done * size_of(type);
  reduce_narrow_portable(type, op, static_cast<unsigned char*>(dst) + offset,
                         static_cast<const unsigned char*>(a) + offset,
                         static_cast<const unsigned char*>(b) + offset, count - done, reference);
}

}  // namespace twinccl::detail

namespace twinccl {

bool narrow_simd_available() {
  static const bool available = detail::cpu_has_avx2_f16c();
  return available;
}

}  // namespace twinccl
