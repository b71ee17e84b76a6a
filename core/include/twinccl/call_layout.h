// Placing one even collective's buffers the way NCCL's in-place rules want them, issuing it, and
// finding the result: shared by the conformance suite and `twinccl perf` (timing and #wrong).
//
//   CallSetup s = setup_call(comm, {OpKind::all_gather, DataType::float32, ReduceOp::sum(), n, 0,
//   true}); s.fill_input(my_bytes);  issue_call(comm, s, {});  std::vector<unsigned char> out =
//   s.result_bytes();
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "twinccl/communicator.h"

namespace twinccl {

struct CallShape {
  OpKind kind = OpKind::all_reduce;  // all_reduce, reduce_scatter, all_gather, broadcast, reduce,
                                     // all_to_all, gather, scatter
  DataType dtype = DataType::float32;
  ReduceOp op = ReduceOp::sum();
  std::size_t count = 0;  // NCCL's count
  int root = 0;
  bool in_place = false;  // ignored where NCCL has no in-place form (all_to_all; non-roots)
};

struct CallSetup {
  CallShape shape;
  Buffer recv_buffer, send_buffer;  // in place: the shared buffer is recv_buffer
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t input_elements = 0;   // this rank's input
  std::size_t result_elements = 0;  // 0 when the rank gets nothing (non-root of reduce/gather)
  Buffer input_view, result_view;   // where the input goes and the result lands (any memory)

  // Copies this rank's input (input_elements) to where the call reads it.
  void fill_input(std::span<const unsigned char> bytes);
  // The rank's result, copied to host memory.
  std::vector<unsigned char> result_bytes() const;
};

// Memory allocated once and lent to every call after it (nccl-tests' way: its largest buffers,
// before the first collective). With several ranks on one GPU NCCL asks for exactly that:
// cudaMalloc/cudaFree synchronise the device and can deadlock against a peer's spinning kernel.
struct CallArena {
  Buffer first;   // an out-of-place call's send buffer
  Buffer second;  // its receive buffer, or an in-place call's one buffer
  Buffer scalar;  // 8 bytes for one value reduced over the ranks (a time, a count)
};
// The bytes a call's buffers need on any rank: `first` (out of place, what it sends) and `second`
// (the larger of what it sends and receives), as nccl-tests sizes its send and receive buffers.
struct CallBytes {
  std::size_t first = 0, second = 0;
};
CallBytes call_buffer_bytes(const CallShape& shape, int nranks);
// Allocates through comm: the two buffers and the scalar (largest = the most any call needs).
CallArena allocate_call_arena(Communicator& comm, CallBytes largest);
// `count` elements of `dtype` at the start of `memory` (an arena's buffer); InvalidArgument when
// they do not fit.
Buffer view_in(const Buffer& memory, std::size_t count, DataType dtype);

// Lays out the buffers for `shape` on this rank: allocated through comm, or views of `arena`'s
// memory (the previous call that used them must have finished).
CallSetup setup_call(Communicator& comm, const CallShape& shape, const CallArena* arena = nullptr);
// Issues the call (async when opts.async_op).
Work issue_call(Communicator& comm, const CallSetup& setup, CallOptions opts = {});

}  // namespace twinccl
