// scatter_chunks: the root packs each rank's (possibly strided) chunk contiguously, then one
// scatter_v delivers chunk r to rank r. Along dim 0 the chunks are already contiguous and no
// packing copy is made.
#include "twinccl/chunk_scatter.h"

#include <functional>
#include <numeric>

#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl {
namespace {

[[noreturn]] void fail(Communicator& comm, const Where& where, const std::string& what) {
  throw InvalidArgument(call_site_text("scatter_chunks", comm.name(), comm.rank(), where) + ": " +
                        what);
}

std::size_t product(std::span<const std::size_t> v, std::size_t begin, std::size_t end) {
  std::size_t p = 1;
  for (std::size_t i = begin; i < end; ++i) p *= v[i];
  return p;
}

}  // namespace

std::vector<std::size_t> chunk_shape(std::span<const std::size_t> shape,
                                     std::span<const std::size_t> chunk_sizes, std::size_t dim,
                                     int rank) {
  std::vector<std::size_t> s(shape.begin(), shape.end());
  s.at(dim) = chunk_sizes[static_cast<std::size_t>(rank)];
  return s;
}

std::vector<std::size_t> even_chunk_sizes(std::size_t size, int nranks) {
  auto n = static_cast<std::size_t>(nranks);
  std::size_t each = (size + n - 1) / n;
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
  std::size_t sum = std::accumulate(chunk_sizes.begin(), chunk_sizes.end(), std::size_t{0});
  if (sum != shape[dim]) {
    fail(comm, where,
         "chunk_sizes sum to " + std::to_string(sum) + " but shape[" + std::to_string(dim) +
             "] is " + std::to_string(shape[dim]));
  }
  std::size_t outer = product(shape, 0, dim), inner = product(shape, dim + 1, shape.size());
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
  if (at_root && tensor.count() != outer * shape[dim] * inner) {
    fail(comm, where,
         "the tensor holds " + std::to_string(tensor.count()) + " elements, the shape needs " +
             std::to_string(outer * shape[dim] * inner));
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
