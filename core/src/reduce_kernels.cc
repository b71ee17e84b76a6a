// Element-wise kernels: reduce (sum/prod/min/max), scale, integer divide, single-element access.
//
// How it works. Each public function dispatches once per call: a switch on the data type picks a
// Codec (kernels_elements.h), a switch on the op picks an Op, and a templated loop runs over the
// whole buffer with no branch on type or op inside. The loop has three variants so that the
// compiler may vectorize it: dst distinct from both inputs (all pointers __restrict), dst == a,
// dst == b. A buffer not aligned to its element type is read and written through memcpy instead.
//   reduce_elements(float32, sum, acc, acc, in, n)  ->  for i: acc[i] += in[i]   (SIMD adds)
//   reduce_elements(float16, sum, d, a, b, n)       ->  for i: d[i] = round16(double(a[i]) + b[i])
// That double loop is kept as the reference; float16/bfloat16/fp8 normally take the float kernels
// of kernels_narrow.cc, which give the same bits several times faster.
#include "twinccl/reduce_kernels.h"

#include <cstring>
#include <string>
#include <type_traits>

#include "kernels_elements.h"
#include "kernels_narrow.h"
#include "kernels_text.h"
#include "twinccl/errors.h"

namespace twinccl {
namespace {

using namespace detail;

template <typename Codec, typename Op>
void combine_distinct(typename Codec::Storage* __restrict d,
                      const typename Codec::Storage* __restrict a,
                      const typename Codec::Storage* __restrict b, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    d[i] = Codec::store(Op::apply(Codec::load(a[i]), Codec::load(b[i])));
  }
}

template <typename Codec, typename Op>
void combine_into_a(typename Codec::Storage* __restrict d,
                    const typename Codec::Storage* __restrict b, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    d[i] = Codec::store(Op::apply(Codec::load(d[i]), Codec::load(b[i])));
  }
}

template <typename Codec, typename Op>
void combine_into_b(typename Codec::Storage* __restrict d,
                    const typename Codec::Storage* __restrict a, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    d[i] = Codec::store(Op::apply(Codec::load(a[i]), Codec::load(d[i])));
  }
}

// Any alignment, any exact aliasing: one element at a time through memcpy.
template <typename Codec, typename Op>
void combine_unaligned(void* dst, const void* a, const void* b, std::size_t count) {
  using S = typename Codec::Storage;
  auto* d_bytes = static_cast<unsigned char*>(dst);
  const auto* a_bytes = static_cast<const unsigned char*>(a);
  const auto* b_bytes = static_cast<const unsigned char*>(b);
  for (std::size_t i = 0; i < count; ++i) {
    S x{};
    S y{};
    std::memcpy(&x, a_bytes + i * sizeof(S), sizeof(S));
    std::memcpy(&y, b_bytes + i * sizeof(S), sizeof(S));
    const S r = Codec::store(Op::apply(Codec::load(x), Codec::load(y)));
    std::memcpy(d_bytes + i * sizeof(S), &r, sizeof(S));
  }
}

template <typename Codec, typename Op>
void combine(void* dst, const void* a, const void* b, std::size_t count) {
  using S = typename Codec::Storage;
  if (!aligned_for<S>(dst) || !aligned_for<S>(a) || !aligned_for<S>(b)) {
    combine_unaligned<Codec, Op>(dst, a, b, count);
  } else if (dst == a) {
    combine_into_a<Codec, Op>(static_cast<S*>(dst), static_cast<const S*>(b), count);
  } else if (dst == b) {
    combine_into_b<Codec, Op>(static_cast<S*>(dst), static_cast<const S*>(a), count);
  } else {
    combine_distinct<Codec, Op>(static_cast<S*>(dst), static_cast<const S*>(a),
                                static_cast<const S*>(b), count);
  }
}

// The double path, or the float kernels for a narrow type unless the caller asks for the former.
template <typename Codec, typename Op>
void combine_chosen(NarrowKernel kernel, DataType type, ReduceKind op, void* dst, const void* a,
                    const void* b, std::size_t count) {
  if (is_narrow_float(type) && kernel != NarrowKernel::via_double) {
    return reduce_narrow(kernel, type, op, dst, a, b, count, &combine<Codec, Op>);
  }
  combine<Codec, Op>(dst, a, b, count);
}

// Narrow floats (stored as bits, computed in double) take sum and product with the NaN rule
// spelled out (NanOrderedOp); native types keep the plain loops the compiler vectorizes.
template <typename Codec, typename Op>
using ArithmeticFor =
    std::conditional_t<std::is_same_v<typename Codec::Storage, typename Codec::Value>, Op,
                       NanOrderedOp<Op>>;

template <typename Codec>
void combine_with_op(NarrowKernel kernel, DataType type, ReduceKind op, void* dst, const void* a,
                     const void* b, std::size_t count) {
  switch (op) {
    case ReduceKind::sum:
      return combine_chosen<Codec, ArithmeticFor<Codec, SumOp>>(kernel, type, op, dst, a, b, count);
    case ReduceKind::prod:
      return combine_chosen<Codec, ArithmeticFor<Codec, ProdOp>>(kernel, type, op, dst, a, b,
                                                                 count);
    case ReduceKind::min:
      return combine_chosen<Codec, MinOp>(kernel, type, op, dst, a, b, count);
    case ReduceKind::max:
      return combine_chosen<Codec, MaxOp>(kernel, type, op, dst, a, b, count);
    default:
      break;
  }
  throw InvalidArgument("reduce_elements: op " + std::string(name(op)) + " (value " +
                        raw_value_text(op) +
                        ") is not an element-wise op; use sum, prod, min or max (avg and "
                        "premul_sum go through Reduction)");
}

void require_pointers(const char* function, std::size_t count, const void* dst, const void* a,
                      const void* b) {
  if (count != 0 && (dst == nullptr || a == nullptr || b == nullptr)) {
    throw InvalidArgument(std::string(function) + ": null buffer with count " +
                          std::to_string(count));
  }
}

}  // namespace

void reduce_elements_with(NarrowKernel kernel, DataType type, ReduceKind op, void* dst,
                          const void* a, const void* b, std::size_t count) {
  if (!is_valid(op)) {
    throw InvalidArgument("reduce_elements: reduce kind value " + raw_value_text(op) +
                          " is outside the ReduceKind enum");
  }
  with_codec(type, "reduce_elements", [&](auto codec) {
    require_pointers("reduce_elements", count, dst, a, b);
    combine_with_op<decltype(codec)>(kernel, type, op, dst, a, b, count);
  });
}

void reduce_elements(DataType type, ReduceKind op, void* dst, const void* a, const void* b,
                     std::size_t count) {
  reduce_elements_with(NarrowKernel::best, type, op, dst, a, b, count);
}

}  // namespace twinccl
