// MindSpore comm_func shapes over the core calls.
#include "twinccl/mindspore_style.h"

#include <numeric>

#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::mindspore_style {

Result all_gather_into_tensor(const Buffer& tensor, Communicator& group, bool async_op,
                              Where where) {
  Buffer out = group.alloc(tensor.count() * static_cast<std::size_t>(group.size()), tensor.dtype());
  Work w = group.all_gather(tensor, out, {async_op, {}}, where);
  return {out, w};
}

Result reduce_scatter_tensor(const Buffer& tensor, ReduceOp op, Communicator& group, bool async_op,
                             Where where) {
  auto n = static_cast<std::size_t>(group.size());
  if (tensor.count() % n != 0) {
    throw InvalidArgument(
        call_site_text("reduce_scatter_tensor", group.name(), group.rank(), where) + ": " +
        std::to_string(tensor.count()) + " elements do not divide into " + std::to_string(n) +
        " ranks");
  }
  Buffer out = group.alloc(tensor.count() / n, tensor.dtype());
  Work w = group.reduce_scatter(tensor, out, op, {async_op, {}}, where);
  return {out, w};
}

Result all_reduce(const Buffer& tensor, ReduceOp op, Communicator& group, bool async_op,
                  Where where) {
  Buffer out = group.alloc(tensor.count(), tensor.dtype());
  Work w = group.all_reduce(tensor, out, op, {async_op, {}}, where);
  return {out, w};
}

Result all_to_all_single(const Buffer& tensor, std::span<const std::size_t> output_split_sizes,
                         std::span<const std::size_t> input_split_sizes, Communicator& group,
                         bool async_op, Where where) {
  std::size_t total_in =
      std::accumulate(input_split_sizes.begin(), input_split_sizes.end(), std::size_t{0});
  if (total_in != tensor.count()) {
    throw InvalidArgument("all_to_all_single (" + describe_call_site(where) +
                          "): input_split_sizes sum to " + std::to_string(total_in) +
                          " but the tensor has " + std::to_string(tensor.count()) + " elements");
  }
  std::size_t total_out =
      std::accumulate(output_split_sizes.begin(), output_split_sizes.end(), std::size_t{0});
  Buffer out = group.alloc(total_out, tensor.dtype());
  Work w = group.all_to_all_v(tensor.data(), input_split_sizes, {}, out.data(), output_split_sizes,
                              {}, tensor.dtype(), {async_op, {}}, where);
  return {out, w};
}

}  // namespace twinccl::mindspore_style
