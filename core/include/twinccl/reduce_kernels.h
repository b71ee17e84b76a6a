// Element-wise kernels every backend-independent reduction uses (emulator data paths, reference
// model, result checks).
//
//   twinccl::reduce_elements(DataType::float16, ReduceKind::sum, dst, a, b, n); // dst = a + b
//
// Every result is rounded to the storage type at each call (half/bfloat16/fp8 included), as a GPU
// library does. dst may alias a, b or src exactly; partial overlap is not allowed.
// Integers wrap around (two's complement) on overflow. min/max on floats follow fmin/fmax: a NaN
// operand loses to a number; NaN only when both are NaN.
#pragma once

#include <cstddef>
#include <cstdint>

#include "twinccl/data_type.h"
#include "twinccl/reduce_op.h"

namespace twinccl {

// dst[i] = a[i] (op) b[i]; op is sum, prod, min or max (avg and premul_sum are sums after
// scaling: see Reduction in reduction.h). Throws InvalidArgument for other ops.
void reduce_elements(DataType type, ReduceKind op, void* dst, const void* a, const void* b,
                     std::size_t count);

// Which implementation reduce_elements_with uses for float16/bfloat16/fp8 (other types have one).
// All give bit-identical results: `via_double` is the original per-element path (decode to
// double, combine, round once), kept as the reference the others are tested and measured against;
// `portable` computes in float one element at a time; `simd` uses AVX2+F16C where the CPU has
// them (else it is `portable`); `best` is what reduce_elements uses.
enum class NarrowKernel { best, simd, portable, via_double };
void reduce_elements_with(NarrowKernel kernel, DataType type, ReduceKind op, void* dst,
                          const void* a, const void* b, std::size_t count);
// Whether this CPU runs the AVX2+F16C narrow kernels (checked at run time, not at build time).
bool narrow_simd_available();

// dst[i] = src[i] * s, where s is `scalar` converted to the data type first (integers: truncated;
// the caller validates integrality). The product is rounded to the storage type.
void scale_elements(DataType type, double scalar, void* dst, const void* src, std::size_t count);

// dst[i] = src[i] / divisor for integer types (truncating toward zero), the post-division of an
// integer avg. Throws InvalidArgument for floating types or divisor <= 0.
void divide_elements(DataType type, std::int64_t divisor, void* dst, const void* src,
                     std::size_t count);

// Reads element i of a buffer of `type` as a double (exact for all but 64-bit integers beyond
// 2^53).
double element_as_double(DataType type, const void* data, std::size_t i);
// Writes `value` into element i, rounded to the storage type (integers: truncated, wrapped).
void store_element(DataType type, void* data, std::size_t i, double value);

}  // namespace twinccl
