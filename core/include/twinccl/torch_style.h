// torch.distributed's shapes of the collectives, as thin calls over Communicator: lists of
// buffers, async_op returning a handle (or nothing), the group as the communicator.
//
//   namespace td = twinccl::torch_style;
//   std::vector<Buffer> parts(world.size(), world.alloc(n, DataType::float32)); // one per rank
//   td::all_gather(world, parts, x);                         // like dist.all_gather(parts, x)
//   std::optional<Work> w = td::all_reduce(world, x, ReduceOp::sum(), /*async_op=*/true);
//   w->wait();
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "twinccl/communicator.h"

namespace twinccl::torch_style {

// Every call returns the Work when async_op is true and std::nullopt after waiting otherwise.
using MaybeWork = std::optional<Work>;

MaybeWork all_reduce(Communicator& group, const Buffer& tensor, ReduceOp op = ReduceOp::sum(),
                     bool async_op = false, Where where = Where::current());
MaybeWork broadcast(Communicator& group, const Buffer& tensor, int src, bool async_op = false,
                    Where where = Where::current());
MaybeWork reduce(Communicator& group, const Buffer& tensor, int dst, ReduceOp op = ReduceOp::sum(),
                 bool async_op = false, Where where = Where::current());
// tensor_list[r] receives rank r's tensor; sizes may differ per rank (uneven all_gather).
MaybeWork all_gather(Communicator& group, std::span<const Buffer> tensor_list, const Buffer& tensor,
                     bool async_op = false, Where where = Where::current());
// output = reduction over ranks of input_list[rank]; input_list[r] may differ in size per r.
MaybeWork reduce_scatter(Communicator& group, const Buffer& output,
                         std::span<const Buffer> input_list, ReduceOp op = ReduceOp::sum(),
                         bool async_op = false, Where where = Where::current());
MaybeWork all_gather_into_tensor(Communicator& group, const Buffer& output, const Buffer& input,
                                 bool async_op = false, Where where = Where::current());
MaybeWork reduce_scatter_tensor(Communicator& group, const Buffer& output, const Buffer& input,
                                ReduceOp op = ReduceOp::sum(), bool async_op = false,
                                Where where = Where::current());
// output_list[r] receives input_list[this rank] of rank r; sizes may differ (all_to_all_v).
MaybeWork all_to_all(Communicator& group, std::span<const Buffer> output_list,
                     std::span<const Buffer> input_list, bool async_op = false,
                     Where where = Where::current());
// dist.batch_isend_irecv: the list of P2POps issued as one group.
struct P2POp {
  enum class Kind { isend, irecv } kind;
  Buffer tensor;
  int peer;
};
MaybeWork batch_isend_irecv(Communicator& group, std::span<const P2POp> ops, bool async_op = true,
                            Where where = Where::current());

// "" when no two non-empty entries of an output list share memory; else "tensor_list[0] and
// tensor_list[1] are the same memory: ..." (each entry receives another rank's data, so all but
// the last write would be lost). Sorted by address: O(n log n). all_gather and all_to_all check
// their output lists with it; Python's gather checks gather_list.
std::string entries_sharing_memory(std::span<const Buffer> list, std::string_view list_name);
// "" when no input overlaps an output (the outputs already apart); else which pair and why.
std::string outputs_over_inputs(std::span<const Buffer> outputs, std::string_view outputs_name,
                                std::span<const Buffer> inputs, std::string_view inputs_name);

}  // namespace twinccl::torch_style
