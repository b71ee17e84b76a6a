// Single-element access: read any element as a double, write a double rounded to the storage
// type. Used by reference models and result checks, not by hot loops.
#include <cstring>
#include <string>

#include "kernels_elements.h"
#include "twinccl/reduce_kernels.h"

namespace twinccl {

double element_as_double(DataType type, const void* data, std::size_t i) {
  double result = 0.0;
  detail::with_codec(type, "element_as_double", [&](auto codec) {
    using Codec = decltype(codec);
    using S = typename Codec::Storage;
    if (data == nullptr) throw InvalidArgument("element_as_double: null buffer");
    S x{};
    std::memcpy(&x, static_cast<const unsigned char*>(data) + i * sizeof(S), sizeof(S));
    result = static_cast<double>(Codec::load(x));
  });
  return result;
}

void store_element(DataType type, void* data, std::size_t i, double value) {
  detail::with_codec(type, "store_element", [&](auto codec) {
    using Codec = decltype(codec);
    using S = typename Codec::Storage;
    using V = typename Codec::Value;
    if (data == nullptr) throw InvalidArgument("store_element: null buffer");
    S x{};
    if constexpr (std::is_integral_v<V>) {
      if (!std::isfinite(value)) {
        throw InvalidArgument("store_element: value " + detail::shortest_text(value) +
                              " cannot be stored in " + std::string(name(type)) + " (not finite)");
      }
      x = detail::wrap_to_integer<V>(value);
    } else if constexpr (std::is_same_v<V, float>) {
      x = detail::round_to_float32(value);
    } else {
      x = Codec::store(value);
    }
    std::memcpy(static_cast<unsigned char*>(data) + i * sizeof(S), &x, sizeof(S));
  });
}

}  // namespace twinccl
