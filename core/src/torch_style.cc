// torch.distributed shapes over the core calls. Lists become the uneven variants (or grouped
// send/recv) on a packed staging buffer; nothing here moves data by itself.
#include "twinccl/torch_style.h"

#include <numeric>
#include <vector>

#include "twinccl/errors.h"

namespace twinccl::torch_style {
namespace {

MaybeWork finish(Work w, bool async_op) {
  if (async_op) return w;
  w.wait();
  return std::nullopt;
}

void check_list(const char* call, Communicator& group, std::span<const Buffer> list, DataType dtype, Where where) {
  if (list.size() != static_cast<std::size_t>(group.size())) {
    throw InvalidArgument(std::string(call) + " on comm '" + group.name() + "' rank " + std::to_string(group.rank()) +
                          " (" + describe_call_site(where) + "): the list has " + std::to_string(list.size()) +
                          " buffers; the group has " + std::to_string(group.size()) + " ranks");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].dtype() != dtype) {
      throw InvalidArgument(std::string(call) + " (" + describe_call_site(where) + "): list[" + std::to_string(i) +
                            "] is " + std::string(name(list[i].dtype())) + ", expected " + std::string(name(dtype)));
    }
  }
}

std::vector<std::size_t> counts_of(std::span<const Buffer> list) {
  std::vector<std::size_t> c;
  for (const Buffer& b : list) c.push_back(b.count());
  return c;
}

}  // namespace

MaybeWork all_reduce(Communicator& group, const Buffer& tensor, ReduceOp op, bool async_op, Where where) {
  return finish(group.all_reduce(tensor, tensor, op, {async_op, {}}, where), async_op);
}

MaybeWork broadcast(Communicator& group, const Buffer& tensor, int src, bool async_op, Where where) {
  return finish(group.broadcast(tensor, src, {async_op, {}}, where), async_op);
}

MaybeWork reduce(Communicator& group, const Buffer& tensor, int dst, ReduceOp op, bool async_op, Where where) {
  return finish(group.reduce(tensor, tensor, op, dst, {async_op, {}}, where), async_op);
}

MaybeWork all_gather(Communicator& group, std::span<const Buffer> tensor_list, const Buffer& tensor, bool async_op,
                     Where where) {
  check_list("all_gather", group, tensor_list, tensor.dtype(), where);
  // Grouped send/recv straight into the list's buffers: no staging copy, uneven sizes allowed.
  group.group_start(where);
  for (int r = 0; r < group.size(); ++r) {
    group.send(tensor, r, {}, where);
    group.recv(tensor_list[static_cast<std::size_t>(r)], r, {}, where);
  }
  return finish(group.group_end({async_op, {}}, where), async_op);
}

MaybeWork reduce_scatter(Communicator& group, const Buffer& output, std::span<const Buffer> input_list, ReduceOp op,
                         bool async_op, Where where) {
  check_list("reduce_scatter", group, input_list, output.dtype(), where);
  std::vector<std::size_t> counts = counts_of(input_list);
  std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  Buffer staging = group.alloc(total, output.dtype());
  std::size_t at = 0;
  for (const Buffer& b : input_list) {
    staging.slice(at, b.count()).copy_from(b);
    at += b.count();
  }
  Work w = group.reduce_scatter_v(staging.data(), output.data(), counts, {}, output.dtype(), op, {async_op, {}}, where);
  if (!async_op) {
    w.wait();
    return std::nullopt;
  }
  // Keep the staging buffer alive until the operation completed.
  return keep_alive(std::move(w), std::make_shared<Buffer>(staging));
}

MaybeWork all_gather_into_tensor(Communicator& group, const Buffer& output, const Buffer& input, bool async_op,
                                 Where where) {
  return finish(group.all_gather(input, output, {async_op, {}}, where), async_op);
}

MaybeWork reduce_scatter_tensor(Communicator& group, const Buffer& output, const Buffer& input, ReduceOp op,
                                bool async_op, Where where) {
  return finish(group.reduce_scatter(input, output, op, {async_op, {}}, where), async_op);
}

MaybeWork all_to_all(Communicator& group, std::span<const Buffer> output_list, std::span<const Buffer> input_list,
                     bool async_op, Where where) {
  DataType dtype = input_list.empty() ? DataType::float32 : input_list[0].dtype();
  check_list("all_to_all", group, input_list, dtype, where);
  check_list("all_to_all", group, output_list, dtype, where);
  group.group_start(where);
  for (int r = 0; r < group.size(); ++r) {
    group.send(input_list[static_cast<std::size_t>(r)], r, {}, where);
    group.recv(output_list[static_cast<std::size_t>(r)], r, {}, where);
  }
  return finish(group.group_end({async_op, {}}, where), async_op);
}

MaybeWork batch_isend_irecv(Communicator& group, std::span<const P2POp> ops, bool async_op, Where where) {
  group.group_start(where);
  for (const P2POp& op : ops) {
    if (op.kind == P2POp::Kind::isend) {
      group.send(op.tensor, op.peer, {}, where);
    } else {
      group.recv(op.tensor, op.peer, {}, where);
    }
  }
  return finish(group.group_end({async_op, {}}, where), async_op);
}

}  // namespace twinccl::torch_style
