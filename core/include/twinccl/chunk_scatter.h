// torch.cuda.comm.scatter(tensor, devices, chunk_sizes, dim, out): one tensor at the root, cut
// into uneven chunks along a dimension, chunk r delivered to rank r of the communicator.
//
//   // root holds a [10, 4] float tensor; ranks get rows 0-2, 3-9 (chunk_sizes {3, 7}, dim 0)
//   Buffer mine = twinccl::scatter_chunks(comm, tensor, DataType::float32, {10, 4}, {3, 7},
//   /*dim=*/0,
//                                         /*root=*/0);
//   // mine has shape [chunk_sizes[rank], 4]; with dim=1 the chunks are column blocks.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "twinccl/communicator.h"

namespace twinccl {

// Shape of rank r's chunk: `shape` with shape[dim] replaced by chunk_sizes[r].
std::vector<std::size_t> chunk_shape(std::span<const std::size_t> shape,
                                     std::span<const std::size_t> chunk_sizes, std::size_t dim,
                                     int rank);

// Even chunk sizes as torch.chunk makes them: ceil(size/n) each, the last ones smaller or zero.
std::vector<std::size_t> even_chunk_sizes(std::size_t size, int nranks);

// `tensor` (row-major, `shape`, of `dtype`) is read at the root only (other ranks may pass an
// empty Buffer); every rank gets its chunk, written to
// `out` when given (must hold exactly the chunk) or to a new buffer. chunk_sizes must have
// comm.size() entries summing to shape[dim] (empty = even_chunk_sizes). Throws InvalidArgument.
Buffer scatter_chunks(Communicator& comm, const Buffer& tensor, DataType dtype,
                      std::span<const std::size_t> shape, std::span<const std::size_t> chunk_sizes,
                      std::size_t dim, int root, Buffer out = {}, Where where = Where::current());

}  // namespace twinccl
