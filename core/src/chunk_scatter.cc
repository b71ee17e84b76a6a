// scatter_chunks: the root packs each rank's (possibly strided) chunk contiguously, then one
// scatter_v delivers chunk r to rank r. Along dim 0 the chunks are already contiguous and no
// packing copy is made.
#include "twinccl/chunk_scatter.h"

#include <functional>

#include "make_op.h"
#include "twinccl/errors.h"

namespace twinccl {
namespace {

// Refuses the call; the peers waiting in the scatter_v learn why this rank never joined them.
[[noreturn]] void fail(Communicator& comm, const Where& where, const std::string& what) {
  reject_call(comm, "scatter_chunks", where, what);
}

std::string list_text(std::span<const std::size_t> v) {
  std::string text = "[";
  for (std::size_t i = 0; i < v.size() && i < 16; ++i)
    text += (i ? ", " : "") + std::to_string(v[i]);
  return text + (v.size() > 16 ? ", ...]" : "]");
}

// a * b, or false when it overflows size_t.
bool multiply(std::size_t a, std::size_t b, std::size_t& out) {
  if (a != 0 && b > ~std::size_t{0} / a) return false;
  out = a * b;
  return true;
}

}  // namespace

std::vector<std::size_t> chunk_shape(std::span<const std::size_t> shape,
                                     std::span<const std::size_t> chunk_sizes, std::size_t dim,
                                     int rank) {
  if (dim >= shape.size()) {
    throw InvalidArgument("chunk_shape: dim=" + std::to_string(dim) + " but the shape has " +
                          std::to_string(shape.size()) + " dimensions");
  }
  if (rank < 0 || static_cast<std::size_t>(rank) >= chunk_sizes.size()) {
    throw InvalidArgument("chunk_shape: rank=" + std::to_string(rank) + " out of range [0, " +
                          std::to_string(chunk_sizes.size()) + ") of chunk_sizes");
  }
  std::vector<std::size_t> s(shape.begin(), shape.end());
  s[dim] = chunk_sizes[static_cast<std::size_t>(rank)];
  return s;
}

std::vector<std::size_t> even_chunk_sizes(std::size_t size, int nranks) {
  if (nranks < 1) {
    throw InvalidArgument("even_chunk_sizes: nranks=" + std::to_string(nranks) +
                          " (needs at least 1)");
  }
  auto n = static_cast<std::size_t>(nranks);
  std::size_t each = size / n + (size % n != 0 ? 1 : 0);  // ceil(size/n) without overflow
  std::vector<std::size_t> sizes(n, 0);
  std::size_t left = size;
  for (std::size_t r = 0; r < n; ++r) {
    sizes[r] = std::min(each, left);
    left -= sizes[r];
  }
  return sizes;
}

Buffer scatter_chunks(Communicator& comm, const Buffer& tensor, DataType dtype,
                      std::span<const std::size_t> shape,
                      std::span<const std::size_t> chunk_sizes_in, std::size_t dim, int root,
                      Buffer out, Where where) {
  auto n = static_cast<std::size_t>(comm.size());
  if (dim >= shape.size())
    fail(comm, where,
         "dim=" + std::to_string(dim) + " but the tensor has " + std::to_string(shape.size()) +
             " dimensions");
  std::vector<std::size_t> chunk_sizes(chunk_sizes_in.begin(), chunk_sizes_in.end());
  if (chunk_sizes.empty()) chunk_sizes = even_chunk_sizes(shape[dim], comm.size());
  if (chunk_sizes.size() != n) {
    fail(comm, where,
         "chunk_sizes has " + std::to_string(chunk_sizes.size()) + " entries for " +
             std::to_string(n) + " ranks");
  }
  std::size_t sum = 0;
  for (std::size_t c : chunk_sizes) {
    if (c > ~std::size_t{0} - sum)
      fail(comm, where, "chunk_sizes " + list_text(chunk_sizes) + " overflow size_t when summed");
    sum += c;
  }
  if (sum != shape[dim]) {
    fail(comm, where,
         "chunk_sizes sum to " + std::to_string(sum) + " but shape[" + std::to_string(dim) +
             "] is " + std::to_string(shape[dim]));
  }
  if (!is_valid(dtype)) {
    fail(comm, where, "data type " + std::to_string(static_cast<int>(dtype)) + " is not valid");
  }
  // Every count below is at most the tensor's element count: check it (and its bytes) once.
  std::size_t outer = 1, inner = 1, total = 1, bytes = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (!multiply(total, shape[i], total) || (i < dim && !multiply(outer, shape[i], outer)) ||
        (i > dim && !multiply(inner, shape[i], inner)) || !multiply(total, size_of(dtype), bytes)) {
      fail(comm, where,
           "shape " + list_text(shape) + " of " + std::string(name(dtype)) +
               " has more elements (or bytes) than size_t can count");
    }
  }
  bool at_root = comm.rank() == root;
  if (at_root && tensor.dtype() != dtype) {
    fail(comm, where,
         "the tensor is " + std::string(name(tensor.dtype())) + " but dtype is " +
             std::string(name(dtype)));
  }
  if (out && out.dtype() != dtype) {
    fail(comm, where,
         "out is " + std::string(name(out.dtype())) + " but dtype is " + std::string(name(dtype)));
  }
  if (at_root && tensor.count() != total) {
    fail(comm, where,
         "the tensor holds " + std::to_string(tensor.count()) + " elements, the shape needs " +
             std::to_string(total));
  }
  std::vector<std::size_t> counts(n);
  for (std::size_t r = 0; r < n; ++r) counts[r] = outer * chunk_sizes[r] * inner;
  std::size_t mine = counts[static_cast<std::size_t>(comm.rank())];
  if (!out) out = comm.alloc(mine, dtype);
  if (out.count() != mine) {
    fail(comm, where,
         "out holds " + std::to_string(out.count()) + " elements; this rank's chunk has " +
             std::to_string(mine));
  }
  Buffer packed = tensor;
  if (at_root && outer > 1) {  // strided chunks: pack chunk r contiguously, rank by rank
    packed = comm.alloc(tensor.count(), dtype);
    std::size_t at = 0, col = 0;
    for (std::size_t r = 0; r < n; ++r) {
      std::size_t width = chunk_sizes[r] * inner;
      for (std::size_t o = 0; o < outer; ++o) {
        packed.slice(at, width).copy_from(tensor.slice(o * shape[dim] * inner + col, width));
        at += width;
      }
      col += width;
    }
  }
  comm.scatter_v(at_root ? packed.data() : nullptr, out.data(), counts, {}, dtype, root, {}, where)
      .wait();
  return out;
}

}  // namespace twinccl
