// Element-wise scaling (premul_sum / float avg inputs) and integer post-division (integer avg).
//
// How it works. The scalar is first converted to the data type, as NCCL does when it stores the
// premul_sum argument in the element type: 1/3 becomes 0x3555 for float16, 1/3 as a float for
// float32, and a truncated integer for integer types. Each product is then rounded once to the
// storage type (computed in double for float16/bfloat16/fp8, natively otherwise). Like the
// reduction loops, one dispatch per call and a loop with a distinct and an in-place variant.
//   scale_elements(float16, 0.25, d, s, n)  ->  d[i] = round16(double(s[i]) * 0.25)
//   divide_elements(int32, 3, d, s, n)      ->  d[i] = s[i] / 3   (-7 / 3 = -2)
#include <cstring>
#include <limits>
#include <string>

#include "kernels_elements.h"
#include "twinccl/reduce_kernels.h"

namespace twinccl {
namespace {

using namespace detail;

template <typename Codec, typename Scalar>
void scale_distinct(typename Codec::Storage* __restrict d,
                    const typename Codec::Storage* __restrict s, Scalar factor, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    d[i] = Codec::store(ProdOp::apply(Codec::load(s[i]), factor));
}

template <typename Codec, typename Scalar>
void scale_in_place(typename Codec::Storage* __restrict d, Scalar factor, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    d[i] = Codec::store(ProdOp::apply(Codec::load(d[i]), factor));
}

template <typename Codec, typename Scalar>
void scale_unaligned(void* dst, const void* src, Scalar factor, std::size_t count) {
  using S = typename Codec::Storage;
  for (std::size_t i = 0; i < count; ++i) {
    S x{};
    std::memcpy(&x, static_cast<const unsigned char*>(src) + i * sizeof(S), sizeof(S));
    const S r = Codec::store(ProdOp::apply(Codec::load(x), factor));
    std::memcpy(static_cast<unsigned char*>(dst) + i * sizeof(S), &r, sizeof(S));
  }
}

// The scalar as the data type holds it, in the type arithmetic is done in.
template <typename Codec>
typename Codec::Value scalar_in_type(double scalar) {
  using V = typename Codec::Value;
  if constexpr (std::is_integral_v<V>) {
    if (!std::isfinite(scalar)) {
      throw InvalidArgument("scale_elements: scalar " + shortest_text(scalar) +
                            " is not finite; an integer type needs an integral scalar");
    }
    return wrap_to_integer<V>(scalar);
  } else if constexpr (std::is_same_v<V, float>) {
    return round_to_float32(scalar);
  } else {
    return Codec::load(Codec::store(scalar));  // double itself, or the narrow format's value
  }
}

template <typename Codec>
void scale(double scalar, void* dst, const void* src, std::size_t count) {
  using S = typename Codec::Storage;
  const auto factor = scalar_in_type<Codec>(scalar);
  if (!aligned_for<S>(dst) || !aligned_for<S>(src)) {
    scale_unaligned<Codec>(dst, src, factor, count);
  } else if (dst == src) {
    scale_in_place<Codec>(static_cast<S*>(dst), factor, count);
  } else {
    scale_distinct<Codec>(static_cast<S*>(dst), static_cast<const S*>(src), factor, count);
  }
}

template <typename T>
void divide(std::int64_t divisor, void* dst, const void* src, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    T x{};
    std::memcpy(&x, static_cast<const unsigned char*>(src) + i * sizeof(T), sizeof(T));
    T r{};
    if constexpr (std::is_signed_v<T>) {
      r = static_cast<T>(static_cast<std::int64_t>(x) / divisor);  // C++ truncates toward zero
    } else {
      r = static_cast<T>(static_cast<std::uint64_t>(x) / static_cast<std::uint64_t>(divisor));
    }
    std::memcpy(static_cast<unsigned char*>(dst) + i * sizeof(T), &r, sizeof(T));
  }
}

void require_buffers(const char* function, std::size_t count, const void* dst, const void* src) {
  if (count != 0 && (dst == nullptr || src == nullptr)) {
    throw InvalidArgument(std::string(function) + ": null buffer with count " +
                          std::to_string(count));
  }
}

}  // namespace

void scale_elements(DataType type, double scalar, void* dst, const void* src, std::size_t count) {
  with_codec(type, "scale_elements", [&](auto codec) {
    require_buffers("scale_elements", count, dst, src);
    scale<decltype(codec)>(scalar, dst, src, count);
  });
}

void divide_elements(DataType type, std::int64_t divisor, void* dst, const void* src,
                     std::size_t count) {
  with_codec(type, "divide_elements", [&](auto codec) {
    using V = typename decltype(codec)::Value;
    if constexpr (!std::is_integral_v<V>) {
      throw InvalidArgument("divide_elements: " + std::string(name(type)) +
                            " is a floating type; only integer types are post-divided "
                            "(floating avg scales the inputs instead)");
    } else {
      if (divisor <= 0) {
        throw InvalidArgument("divide_elements: divisor " + std::to_string(divisor) + " for " +
                              std::string(name(type)) + " must be positive");
      }
      require_buffers("divide_elements", count, dst, src);
      divide<V>(divisor, dst, src, count);
    }
  });
}

}  // namespace twinccl
