// GPU memory for Communicator::alloc: cudaMalloc'd, zero-filled, copies ordered on the
// communicator's stream (a copy_out after an async all_reduce sees its result).
//
//   auto memory = allocate_device_memory(stream_context, bytes);
//   Buffer x(memory, 0, count, dtype);
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "nccl/context.h"
#include "twinccl/buffer.h"

namespace twinccl::nccl {

std::shared_ptr<Memory> allocate_device_memory(std::shared_ptr<StreamContext> stream,
                                               std::size_t bytes);

// cudaMemcpyAsync on `stream` between two bounded drains of it (TimeoutError / AbortedError,
// never an unbounded host wait); `what` names the copy in messages ("device Memory::copy_in").
void copy_on_stream(StreamContext& stream, void* dst, const void* src, std::size_t bytes,
                    cudaMemcpyKind kind, const std::string& what);

}  // namespace twinccl::nccl
