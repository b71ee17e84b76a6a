// MindSpore comm_func's shapes: one stacked output tensor returned with a handle.
//
//   namespace ms = twinccl::mindspore_style;
//   auto [out, handle] = ms::all_gather_into_tensor(x, world, /*async_op=*/true);  // size()*n
//   handle.wait();
//   auto [part, h2] = ms::reduce_scatter_tensor(grad, ReduceOp::sum(), world);     // n/size()
//   auto [total, h3] = ms::reduce(x, /*root=*/0, ReduceOp::sum(), world);   // 1 element off root
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

// comm_func.reduce: on group rank `root` the reduction; elsewhere a 1-element placeholder with no
// meaning (comm_func's shape [1]).
Result reduce(const Buffer& tensor, int root, ReduceOp op, Communicator& group,
              bool async_op = false, Where where = Where::current());
// comm_func.broadcast: a new buffer holding `root`'s tensor (every rank passes its size).
Result broadcast(const Buffer& tensor, int root, Communicator& group, bool async_op = false,
                 Where where = Where::current());
// comm_func.gather_into_tensor: on `root` every rank's tensor stacked in rank order; elsewhere a
// 1-element placeholder.
Result gather_into_tensor(const Buffer& tensor, int root, Communicator& group,
                          bool async_op = false, Where where = Where::current());
// comm_func.scatter_tensor: this rank's share (count / size()) of `root`'s tensor; every rank
// passes a tensor of the full size.
Result scatter_tensor(const Buffer& tensor, int root, Communicator& group, bool async_op = false,
                      Where where = Where::current());
// comm_func.recv / irecv: a new buffer of `count` elements from `peer`.
Result recv(std::size_t count, DataType dtype, int peer, Communicator& group, bool async_op = false,
            Where where = Where::current());

}  // namespace twinccl::mindspore_style
