// MindSpore comm_func's shapes: one stacked output tensor returned with a handle.
//
//   namespace ms = twinccl::mindspore_style;
//   auto [out, handle] = ms::all_gather_into_tensor(x, world, /*async_op=*/true);  // size()*n
//   handle.wait();
//   auto [part, h2] = ms::reduce_scatter_tensor(grad, ReduceOp::sum(), world);     // n/size()
#pragma once

#include "twinccl/communicator.h"

namespace twinccl::mindspore_style {

struct Result {
  Buffer output;  // allocated through the group's communicator
  Work handle;    // already complete unless async_op
};

// Output: group.size() copies of `tensor`'s size, stacked in rank order.
Result all_gather_into_tensor(const Buffer& tensor, Communicator& group, bool async_op = false,
                              Where where = Where::current());
// tensor.count() must divide by group.size(); output holds this rank's reduced share.
Result reduce_scatter_tensor(const Buffer& tensor, ReduceOp op, Communicator& group,
                             bool async_op = false, Where where = Where::current());
Result all_reduce(const Buffer& tensor, ReduceOp op, Communicator& group, bool async_op = false,
                  Where where = Where::current());
// Uneven: output_split_sizes[r] elements from rank r, input_split_sizes[r] to rank r.
Result all_to_all_single(const Buffer& tensor, std::span<const std::size_t> output_split_sizes,
                         std::span<const std::size_t> input_split_sizes, Communicator& group,
                         bool async_op = false, Where where = Where::current());

}  // namespace twinccl::mindspore_style
