// The description of one call, as every backend receives it.
//
//   OpDesc op{.kind = OpKind::all_reduce, .send = x, .recv = y, .count = n,
//             .dtype = DataType::float32, .op = ReduceOp::sum()};
//   validate(op, rank, nranks);   // throws InvalidArgument naming the call, rank and value
//
// Counts follow NCCL: all_reduce/broadcast/reduce: `count` elements in and out;
// all_gather: `count` in, nranks*count out; reduce_scatter: nranks*count in, `count` out;
// all_to_all: nranks*count in and out (count per peer); gather: count in, nranks*count out at
// root; scatter: nranks*count in at root, count out; send/recv: count.
// Uneven variants take per-rank counts (and optional displacements; empty = packed in rank order):
// all_gather_v: send_count = recv_counts[rank]... see communicator.h for each one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/call_site_text.h"  // describe_call_site, for messages
#include "twinccl/data_type.h"
#include "twinccl/reduce_op.h"

namespace twinccl {

enum class OpKind : std::uint8_t {
  all_reduce,
  reduce_scatter,
  all_gather,
  broadcast,
  reduce,
  all_to_all,
  gather,
  scatter,
  send,
  recv,
  barrier,
  all_gather_v,
  reduce_scatter_v,
  all_to_all_v,
  gather_v,
  scatter_v,
};

std::string_view name(OpKind kind);
// Accepts the names above (and "allreduce", "reducescatter", "allgather", "alltoall", nccl-tests
// spellings). Throws InvalidArgument listing the accepted names.
OpKind parse_op_kind(std::string_view text);
bool is_reducing(OpKind kind);  // all_reduce, reduce_scatter(_v), reduce
bool is_rooted(OpKind kind);    // broadcast, reduce, gather(_v), scatter(_v)
bool is_p2p(OpKind kind);       // send, recv
bool is_uneven(OpKind kind);    // the _v variants

inline constexpr std::size_t kUnknownCapacity = std::numeric_limits<std::size_t>::max();

struct OpDesc {
  OpKind kind = OpKind::barrier;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  // NCCL's count for the even collectives; send/recv count
  DataType dtype = DataType::float32;
  ReduceOp op = ReduceOp::sum();
  int root = -1;  // rooted collectives
  int peer = -1;  // send/recv
  // Uneven variants (see communicator.h): per-rank counts and displacements in elements.
  std::vector<std::size_t> send_counts, send_displs, recv_counts, recv_displs;
  // Elements the send/recv buffers hold, when the caller knows (Buffer overloads do).
  std::size_t send_capacity = kUnknownCapacity;
  std::size_t recv_capacity = kUnknownCapacity;
  bool async_op = false;
  std::string algorithm;  // forced algorithm name; empty = the backend's choice
  std::source_location where = std::source_location::current();
  // The memory of Buffer arguments (nullptr for raw pointers): a backend keeps these alive until
  // the operation completed, so dropping a Buffer before Work::wait() is safe.
  std::shared_ptr<const void> send_owner, recv_owner;
  // For messages, when this op is one piece of a convenience call (torch_style): that call's name
  // ("all_gather") and what the user calls this op's buffer there ("tensor_list[1]", "tensor").
  std::string_view part_of;
  std::string role;
};

// Elements this rank reads from `send` and writes to `recv` for `op` (0 when it does not use
// that buffer, e.g. recv of a non-root rank in reduce). Throws InvalidArgument on overflow.
std::size_t send_elements(const OpDesc& op, int rank, int nranks);
std::size_t recv_elements(const OpDesc& op, int rank, int nranks);

// True when the call is in place by NCCL's rules (recv == send for all_reduce/broadcast/reduce,
// recv == send + rank*count for reduce_scatter, send == recv + rank*count for all_gather).
bool is_in_place(const OpDesc& op, int rank);

// Checks one rank's call on its own: null buffers with count > 0, root/peer out of range,
// count overflow, unsupported reduce op for the dtype, buffers smaller than needed (when their
// capacity is known), malformed uneven counts, overlapping buffers NCCL forbids.
// Throws InvalidArgument: "all_reduce on comm 'world' rank 3 (train.cc:88): root=9 out of range [0,
// 8)".
void validate(const OpDesc& op, int rank, int nranks, std::string_view comm_name);

}  // namespace twinccl
