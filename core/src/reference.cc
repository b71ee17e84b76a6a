#include "twinccl/reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "twinccl/algorithms.h"
#include "twinccl/op_traits.h"
#include "twinccl/reduce_kernels.h"
#include "twinccl/reduction.h"

namespace twinccl {
namespace {

// out[0..n) = fold over ranks of inputs[r][offset..offset+n) in ring order for `chunk`.
void fold(const Reduction& red, const std::vector<Bytes>& inputs, int chunk, std::size_t offset,
          std::size_t n, unsigned char* out) {
  std::size_t e = size_of(red.dtype);
  int nranks = static_cast<int>(inputs.size());
  Bytes tmp(n * e);
  int first = ring_fold_rank(nranks, chunk, 0);
  red.load(first, out, inputs[static_cast<std::size_t>(first)].data() + offset * e, n);
  for (int k = 1; k < nranks; ++k) {
    int r = ring_fold_rank(nranks, chunk, k);
    red.load(r, tmp.data(), inputs[static_cast<std::size_t>(r)].data() + offset * e, n);
    red.combine(out, out, tmp.data(), n);
  }
  red.finalize(out, n);
}

}  // namespace

Bytes reference_output(const OpDesc& call, const std::vector<Bytes>& inputs,
                       const std::vector<ReduceOp>& ops, int rank, const Bytes& before) {
  int n = static_cast<int>(inputs.size());
  auto un = static_cast<std::size_t>(n);
  auto ur = static_cast<std::size_t>(rank);
  std::size_t e = size_of(call.dtype);
  std::size_t count = call.count;
  Bytes out = before;
  auto put = [&](std::size_t at_elem, const unsigned char* src, std::size_t elems) {
    if (elems) std::memcpy(out.data() + at_elem * e, src, elems * e);
  };
  std::optional<Reduction> red;
  if (is_reducing(call.kind)) red = Reduction::make(call.dtype, ops);
  const CollectiveSpec v = is_uneven(call.kind) ? spec_of(call, n) : CollectiveSpec{};  // blocks
  switch (call.kind) {
    case OpKind::all_reduce:
      for (int c = 0; c < n; ++c) {
        ElementRange ch = ring_chunk(count, n, c);
        fold(*red, inputs, c, ch.begin, ch.size(), out.data() + ch.begin * e);
      }
      break;
    case OpKind::reduce_scatter:
      fold(*red, inputs, rank, ur * count, count, out.data());
      break;
    case OpKind::reduce:
      if (rank == call.root) fold(*red, inputs, call.root, 0, count, out.data());
      break;
    case OpKind::all_gather:
      for (std::size_t q = 0; q < un; ++q) put(q * count, inputs[q].data(), count);
      break;
    case OpKind::broadcast:
      put(0, inputs[static_cast<std::size_t>(call.root)].data(), count);
      break;
    case OpKind::all_to_all:
      for (std::size_t q = 0; q < un; ++q) put(q * count, inputs[q].data() + ur * count * e, count);
      break;
    case OpKind::gather:
      if (rank == call.root) {
        for (std::size_t q = 0; q < un; ++q) put(q * count, inputs[q].data(), count);
      }
      break;
    case OpKind::scatter:
      put(0, inputs[static_cast<std::size_t>(call.root)].data() + ur * count * e, count);
      break;
    case OpKind::all_gather_v:
    case OpKind::gather_v:
      if (call.kind == OpKind::gather_v && rank != call.root) break;
      for (std::size_t q = 0; q < un; ++q) put(v.displs[q], inputs[q].data(), v.counts[q]);
      break;
    case OpKind::scatter_v:
      put(0, inputs[static_cast<std::size_t>(call.root)].data() + v.displs[ur] * e, v.counts[ur]);
      break;
    case OpKind::reduce_scatter_v:
      fold(*red, inputs, rank, v.displs[ur], v.counts[ur], out.data());
      break;
    default:
      break;
  }
  return out;
}

double test_value(DataType dtype, ReduceKind op, int rank, std::size_t i, unsigned salt) {
  auto h = static_cast<unsigned>((static_cast<std::size_t>(rank) + 1) * 2654435761u + i * 40503u +
                                 salt * 97u);
  h ^= h >> 13;
  int small = static_cast<int>(h % 7) - 3;  // -3..3
  if (!is_floating(dtype)) {
    if (op == ReduceKind::prod) return (h % 3 == 0) ? 2 : 1;
    bool is_unsigned =
        dtype == DataType::uint8 || dtype == DataType::uint32 || dtype == DataType::uint64;
    return is_unsigned ? static_cast<double>(h % 11) : small * 3 + static_cast<int>(h % 5);
  }
  if (op == ReduceKind::prod) return 1.0 + 0.125 * small;
  if (dtype == DataType::float8_e4m3 || dtype == DataType::float8_e5m2)
    return 0.25 * small + 0.125 * (h % 3);
  return small * 0.3 +
         static_cast<double>(h % 1000) / 1024.0;  // inexact sums: the fold order matters
}

Bytes make_input(DataType dtype, ReduceKind op, int rank, std::size_t count, unsigned salt) {
  Bytes b(count * size_of(dtype));
  for (std::size_t i = 0; i < count; ++i)
    store_element(dtype, b.data(), i, test_value(dtype, op, rank, i, salt));
  return b;
}

Bytes make_order_free_input(DataType dtype, ReduceKind op, int rank, std::size_t count,
                            unsigned salt) {
  if (!is_floating(dtype)) return make_input(dtype, op, rank, count, salt);
  const bool fp8 = dtype == DataType::float8_e4m3 || dtype == DataType::float8_e5m2;
  Bytes b(count * size_of(dtype));
  for (std::size_t i = 0; i < count; ++i) {
    auto h = static_cast<unsigned>((static_cast<std::size_t>(rank) + 1) * 2654435761u + i * 40503u +
                                   salt * 97u);
    h ^= h >> 13;
    double v = 0;
    if (op == ReduceKind::prod) {
      v = h % 64 == 0 ? 2.0 : h % 64 == 1 ? 0.5 : 1.0;  // products stay powers of two
    } else if (op == ReduceKind::min || op == ReduceKind::max) {
      v = test_value(dtype, op, rank, i, salt);  // a selection is exact in any order
    } else {
      v = fp8 ? static_cast<double>(static_cast<int>(h % 3) - 1)
              : static_cast<double>(static_cast<int>(h % 7) - 3);
    }
    store_element(dtype, b.data(), i, v);
  }
  return b;
}

double order_free_premul_scalar(DataType dtype, int rank) {
  if (dtype == DataType::float8_e4m3 || dtype == DataType::float8_e5m2) return 1.0;
  return 1.0 / static_cast<double>(1 << (rank % 3));
}

bool results_agree(DataType dtype, ReduceKind op, int nranks, const unsigned char* got,
                   const unsigned char* want, std::size_t i) {
  const std::size_t e = size_of(dtype);
  if (std::memcmp(got + i * e, want + i * e, e) == 0) return true;
  const bool power_of_two = nranks > 0 && (nranks & (nranks - 1)) == 0;
  if (op != ReduceKind::avg || !is_floating(dtype) || power_of_two) return false;
  const double g = element_as_double(dtype, got, i), w = element_as_double(dtype, want, i);
  double ulp = 0;  // of each type's significand
  switch (dtype) {
    case DataType::float64:
      ulp = 0x1p-52;
      break;
    case DataType::float32:
      ulp = 0x1p-23;
      break;
    case DataType::float16:
      ulp = 0x1p-10;
      break;
    case DataType::bfloat16:
      ulp = 0x1p-7;
      break;
    default:  // float8
      ulp = 0x1p-2;
      break;
  }
  // Recursive summation of n scaled terms of magnitude <= 3/n: an error of at most about n
  // roundings of a partial sum no larger than 3 (the order-free inputs are in [-3, 3]).
  return std::abs(g - w) <= (nranks + 2) * ulp * std::max(std::abs(w), 3.0);
}

}  // namespace twinccl
