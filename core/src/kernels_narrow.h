// Private: float16/bfloat16/fp8 element-wise reductions (sum, prod, min, max) computed in float,
// bit-identical to the per-element double path they replace (kernels_narrow_float.h says why).
//
//   reduce_narrow(NarrowKernel::best, DataType::float16, ReduceKind::sum, d, a, b, n, reference);
//
// `reference` is that double path for a run of elements (same pointers, same aliasing); the fast
// kernels hand it every element whose result is NaN, so NaN signs and payloads stay exactly what
// they were, and nothing else.
#pragma once

#include <cstddef>

#include "twinccl/data_type.h"
#include "twinccl/reduce_kernels.h"
#include "twinccl/reduce_op.h"

namespace twinccl::detail {

using ReferenceRun = void (*)(void* dst, const void* a, const void* b, std::size_t count);

constexpr bool is_narrow_float(DataType type) {
  return type == DataType::float16 || type == DataType::bfloat16 || type == DataType::float8_e4m3 ||
         type == DataType::float8_e5m2;
}

// type is narrow, op is sum/prod/min/max, kernel is not via_double.
void reduce_narrow(NarrowKernel kernel, DataType type, ReduceKind op, void* dst, const void* a,
                   const void* b, std::size_t count, ReferenceRun reference);

// One scalar float element at a time: any CPU.
void reduce_narrow_portable(DataType type, ReduceKind op, void* dst, const void* a, const void* b,
                            std::size_t count, ReferenceRun reference);

// 8 (fp8: 16) elements at a time with AVX2 (+F16C); only where narrow_simd_available(). Returns
// how many leading elements it did (a multiple of 8 or 16); the caller does the rest.
std::size_t reduce_narrow_avx2(DataType type, ReduceKind op, void* dst, const void* a,
                               const void* b, std::size_t count, ReferenceRun reference);

}  // namespace twinccl::detail
