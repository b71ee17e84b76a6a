// torch.distributed shapes over the core calls. Lists become the uneven variants (or grouped
// send/recv) on a packed staging buffer; nothing here moves data by itself.
#include "twinccl/torch_style.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "make_op.h"

namespace twinccl::torch_style {
namespace {

MaybeWork finish(Work w, bool async_op) {
  if (async_op) return w;
  w.wait();
  return std::nullopt;
}

// torch's rule for the *_tensor calls: the larger tensor holds exactly size() of the smaller.
void check_stacked(const char* call, Communicator& group, const char* large_name,
                   const Buffer& large, const char* small_name, const Buffer& small, Where where) {
  auto n = static_cast<std::size_t>(group.size());
  if (large.count() % n != 0 || large.count() / n != small.count()) {
    reject_call(group, call, where,
                std::string(large_name) + " holds " + std::to_string(large.count()) +
                    " elements but must hold exactly group size x " + small_name + " = " +
                    std::to_string(group.size()) + " x " + std::to_string(small.count()) +
                    " (torch's rule: no element left unwritten or unread)");
  }
}

void check_list(const char* call, const char* list_name, Communicator& group,
                std::span<const Buffer> list, DataType dtype, Where where) {
  if (list.size() != static_cast<std::size_t>(group.size())) {
    reject_call(group, call, where,
                list_name + std::string(" has ") + std::to_string(list.size()) +
                    " buffers; the group has " + std::to_string(group.size()) + " ranks");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].dtype() != dtype) {
      reject_call(group, call, where,
                  list_name + ("[" + std::to_string(i) + "] is ") +
                      std::string(name(list[i].dtype())) + ", expected " +
                      std::string(name(dtype)));
    }
  }
}

std::string indexed(const char* list, std::size_t i) {
  return std::string(list) + "[" + std::to_string(i) + "]";
}

void check_outputs_apart(const char* call, const char* list_name, Communicator& group,
                         std::span<const Buffer> list, Where where) {
  std::string shared = entries_sharing_memory(list, list_name);
  if (!shared.empty()) reject_call(group, call, where, shared);
}

// One send or recv of a list call, named as the user knows it ("tensor_list[1]") in messages.
OpDesc piece(OpKind kind, const Buffer& b, int peer, std::string_view part_of, std::string role,
             Where where) {
  const bool send = kind == OpKind::send;
  OpDesc d =
      make_op(kind, send ? b : Buffer(), send ? Buffer() : b, b.count(), {}, where, {.peer = peer});
  d.part_of = part_of;
  d.role = std::move(role);
  return d;
}

std::vector<std::size_t> counts_of(std::span<const Buffer> list) {
  std::vector<std::size_t> c;
  for (const Buffer& b : list) c.push_back(b.count());
  return c;
}

}  // namespace

MaybeWork all_reduce(Communicator& group, const Buffer& tensor, ReduceOp op, bool async_op,
                     Where where) {
  return finish(group.all_reduce(tensor, tensor, op, {async_op, {}}, where), async_op);
}

MaybeWork broadcast(Communicator& group, const Buffer& tensor, int src, bool async_op,
                    Where where) {
  return finish(group.broadcast(tensor, src, {async_op, {}}, where), async_op);
}

MaybeWork reduce(Communicator& group, const Buffer& tensor, int dst, ReduceOp op, bool async_op,
                 Where where) {
  return finish(group.reduce(tensor, tensor, op, dst, {async_op, {}}, where), async_op);
}

MaybeWork all_gather(Communicator& group, std::span<const Buffer> tensor_list, const Buffer& tensor,
                     bool async_op, Where where) {
  check_list("all_gather", "tensor_list", group, tensor_list, tensor.dtype(), where);
  check_outputs_apart("all_gather", "tensor_list", group, tensor_list, where);
  // torch reads the input whole before it writes any entry (NCCL gathers into a flat buffer,
  // then copies out), so an input that is also another rank's entry (tensor_list[j], j != rank)
  // is sent from a copy; as tensor_list[rank] itself it is read in place.
  Buffer input = tensor;
  const Buffer& own = tensor_list[static_cast<std::size_t>(group.rank())];
  if ((own.data() != tensor.data() || own.count() != tensor.count()) &&
      !outputs_over_inputs(tensor_list, "tensor_list", std::span<const Buffer>(&tensor, 1),
                           "tensor")
           .empty()) {
    input = group.alloc(tensor.count(), tensor.dtype());
    input.copy_from(tensor);
  }
  // Grouped send/recv straight into the list's buffers: no staging copy, uneven sizes allowed.
  Group batch(group, where);
  for (int r = 0; r < group.size(); ++r) {
    auto i = static_cast<std::size_t>(r);
    group.issue(piece(OpKind::send, input, r, "all_gather", "tensor", where));
    group.issue(
        piece(OpKind::recv, tensor_list[i], r, "all_gather", indexed("tensor_list", i), where));
  }
  return finish(batch.end({async_op, {}}, where), async_op);
}

MaybeWork reduce_scatter(Communicator& group, const Buffer& output,
                         std::span<const Buffer> input_list, ReduceOp op, bool async_op,
                         Where where) {
  check_list("reduce_scatter", "input_list", group, input_list, output.dtype(), where);
  const Buffer& mine = input_list[static_cast<std::size_t>(group.rank())];
  if (output.count() != mine.count()) {
    reject_call(group, "reduce_scatter", where,
                "output holds " + std::to_string(output.count()) + " elements but input_list[" +
                    std::to_string(group.rank()) + "] (this rank's share) holds " +
                    std::to_string(mine.count()) + "; they must match");
  }
  std::vector<std::size_t> counts = counts_of(input_list);
  std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  Buffer staging = group.alloc(total, output.dtype());
  std::size_t at = 0;
  for (const Buffer& b : input_list) {
    staging.slice(at, b.count()).copy_from(b);
    at += b.count();
  }
  // the staging buffer and the output live until it completed
  OpDesc d =
      make_op(OpKind::reduce_scatter_v, staging, output, 0, {async_op, {}}, where, {.op = op});
  d.recv_counts = std::move(counts);
  return finish(group.issue(std::move(d)), async_op);
}

MaybeWork all_gather_into_tensor(Communicator& group, const Buffer& output, const Buffer& input,
                                 bool async_op, Where where) {
  if (input.dtype() == output.dtype())  // else the core call names both types
    check_stacked("all_gather_into_tensor", group, "output", output, "input", input, where);
  return finish(group.all_gather(input, output, {async_op, {}}, where), async_op);
}

MaybeWork reduce_scatter_tensor(Communicator& group, const Buffer& output, const Buffer& input,
                                ReduceOp op, bool async_op, Where where) {
  if (input.dtype() == output.dtype())
    check_stacked("reduce_scatter_tensor", group, "input", input, "output", output, where);
  return finish(group.reduce_scatter(input, output, op, {async_op, {}}, where), async_op);
}

MaybeWork all_to_all(Communicator& group, std::span<const Buffer> output_list,
                     std::span<const Buffer> input_list, bool async_op, Where where) {
  DataType dtype = input_list.empty() ? DataType::float32 : input_list[0].dtype();
  check_list("all_to_all", "input_list", group, input_list, dtype, where);
  check_list("all_to_all", "output_list", group, output_list, dtype, where);
  check_outputs_apart("all_to_all", "output_list", group, output_list, where);
  if (std::string over = outputs_over_inputs(output_list, "output_list", input_list, "input_list");
      !over.empty())
    reject_call(group, "all_to_all", where, over);
  Group batch(group, where);
  for (int r = 0; r < group.size(); ++r) {
    auto i = static_cast<std::size_t>(r);
    group.issue(
        piece(OpKind::send, input_list[i], r, "all_to_all", indexed("input_list", i), where));
    group.issue(
        piece(OpKind::recv, output_list[i], r, "all_to_all", indexed("output_list", i), where));
  }
  return finish(batch.end({async_op, {}}, where), async_op);
}

MaybeWork batch_isend_irecv(Communicator& group, std::span<const P2POp> ops, bool async_op,
                            Where where) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != P2POp::Kind::isend && ops[i].kind != P2POp::Kind::irecv) {
      reject_call(group, "batch_isend_irecv", where,
                  indexed("p2p_op_list", i) + ".kind value " +
                      std::to_string(static_cast<int>(ops[i].kind)) +
                      " is neither isend nor irecv");
    }
  }
  Group batch(group, where);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const P2POp& op = ops[i];
    OpKind kind = op.kind == P2POp::Kind::isend ? OpKind::send : OpKind::recv;
    group.issue(
        piece(kind, op.tensor, op.peer, "batch_isend_irecv", indexed("p2p_op_list", i), where));
  }
  return finish(batch.end({async_op, {}}, where), async_op);
}

namespace {

struct Range {
  std::uintptr_t begin, end;
  std::size_t index;
};

// The non-empty entries of `list` as address ranges, sorted by start.
std::vector<Range> sorted_ranges(std::span<const Buffer> list) {
  std::vector<Range> ranges;
  ranges.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].empty() || list[i].data() == nullptr) continue;
    auto begin = reinterpret_cast<std::uintptr_t>(list[i].data());
    ranges.push_back({begin, begin + list[i].bytes(), i});
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  return ranges;
}

std::string shared_text(const Range& a, const Range& b) {
  if (a.begin == b.begin && a.end == b.end) return " are the same memory";
  return " overlap in " + std::to_string(std::min(a.end, b.end) - std::max(a.begin, b.begin)) +
         " bytes";
}

}  // namespace

std::string entries_sharing_memory(std::span<const Buffer> list, std::string_view list_name) {
  std::vector<Range> ranges = sorted_ranges(list);
  std::string name(list_name);
  for (std::size_t k = 1; k < ranges.size(); ++k) {
    const Range &a = ranges[k - 1], &b = ranges[k];
    if (b.begin >= a.end) continue;
    std::size_t first = std::min(a.index, b.index), second = std::max(a.index, b.index);
    return indexed(name.c_str(), first) + " and " + indexed(name.c_str(), second) +
           shared_text(a, b) + ": rank " + std::to_string(first) + "'s and rank " +
           std::to_string(second) +
           "'s data would both be written there and only the last would stay; give every entry "
           "its own tensor";
  }
  return {};
}

std::string outputs_over_inputs(std::span<const Buffer> outputs, std::string_view outputs_name,
                                std::span<const Buffer> inputs, std::string_view inputs_name) {
  std::vector<Range> outs = sorted_ranges(outputs);
  std::vector<Range> ins = sorted_ranges(inputs);
  // Sorted by start: an input overlaps an output iff it starts before the end of the last output
  // that starts before the input's end (outputs are disjoint, checked first).
  for (const Range& in : ins) {
    auto after = std::lower_bound(outs.begin(), outs.end(), in.end,
                                  [](const Range& r, std::uintptr_t v) { return r.begin < v; });
    if (after == outs.begin()) continue;
    const Range& out = *(after - 1);
    if (out.end <= in.begin) continue;
    return indexed(std::string(outputs_name).c_str(), out.index) + " and " +
           indexed(std::string(inputs_name).c_str(), in.index) + shared_text(out, in) +
           ": the operation would write an input while the ranks still read it (on GPUs the "
           "sends and receives run at once); use separate input and output tensors";
  }
  return {};
}

}  // namespace twinccl::torch_style
