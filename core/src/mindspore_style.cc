// MindSpore comm_func shapes over the core calls.
#include "twinccl/mindspore_style.h"

#include "make_op.h"

namespace twinccl::mindspore_style {
namespace {

// Sum of split sizes, refusing an overflow.
std::size_t sum_of(Communicator& group, Where where, const char* what,
                   std::span<const std::size_t> sizes) {
  std::size_t sum = 0;
  for (std::size_t s : sizes) {
    if (s > ~std::size_t{0} - sum) {
      reject_call(group, "all_to_all_single", where,
                  std::string(what) + " overflow size_t when summed (an entry is " +
                      std::to_string(s) + ")");
    }
    sum += s;
  }
  return sum;
}

}  // namespace

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
    reject_call(group, "reduce_scatter_tensor", where,
                std::to_string(tensor.count()) + " elements do not divide into " +
                    std::to_string(n) + " ranks");
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
  std::size_t total_in = sum_of(group, where, "input_split_sizes", input_split_sizes);
  if (total_in != tensor.count()) {
    reject_call(group, "all_to_all_single", where,
                "input_split_sizes sum to " + std::to_string(total_in) + " but the tensor has " +
                    std::to_string(tensor.count()) + " elements");
  }
  std::size_t total_out = sum_of(group, where, "output_split_sizes", output_split_sizes);
  Buffer out = group.alloc(total_out, tensor.dtype());
  OpDesc d = make_op(OpKind::all_to_all_v, tensor, out, 0, {async_op, {}}, where);
  d.send_counts.assign(input_split_sizes.begin(), input_split_sizes.end());
  d.recv_counts.assign(output_split_sizes.begin(), output_split_sizes.end());
  Work w = group.issue(std::move(d));
  return {out, w};
}

Result reduce(const Buffer& tensor, int root, ReduceOp op, Communicator& group, bool async_op,
              Where where) {
  const bool mine = group.rank() == root;
  Buffer out = group.alloc(mine ? tensor.count() : 1, tensor.dtype());
  Work w = group.reduce(tensor, mine ? out : Buffer(), op, root, {async_op, {}}, where);
  return {out, w};
}

Result broadcast(const Buffer& tensor, int root, Communicator& group, bool async_op, Where where) {
  Buffer out = group.alloc(tensor.count(), tensor.dtype());
  return {out, group.issue(make_op(OpKind::broadcast, tensor, out, tensor.count(), {async_op, {}},
                                   where, {.root = root}))};
}

Result gather_into_tensor(const Buffer& tensor, int root, Communicator& group, bool async_op,
                          Where where) {
  const bool mine = group.rank() == root;
  const auto n = static_cast<std::size_t>(group.size());
  Buffer out = group.alloc(mine ? n * tensor.count() : 1, tensor.dtype());
  Buffer target = mine ? out : Buffer();
  return {out, group.issue(make_op(OpKind::gather, tensor, target, tensor.count(), {async_op, {}},
                                   where, {.root = root}))};
}

Result scatter_tensor(const Buffer& tensor, int root, Communicator& group, bool async_op,
                      Where where) {
  const auto n = static_cast<std::size_t>(group.size());
  if (tensor.count() % n != 0) {
    reject_call(group, "scatter_tensor", where,
                std::to_string(tensor.count()) + " elements do not divide into " +
                    std::to_string(n) + " ranks");
  }
  Buffer out = group.alloc(tensor.count() / n, tensor.dtype());
  return {out, group.issue(make_op(OpKind::scatter, tensor, out, tensor.count() / n, {async_op, {}},
                                   where, {.root = root}))};
}

Result recv(std::size_t count, DataType dtype, int peer, Communicator& group, bool async_op,
            Where where) {
  Buffer out = group.alloc(count, dtype);
  return {out, group.recv(out, peer, {async_op, {}}, where)};
}

}  // namespace twinccl::mindspore_style
