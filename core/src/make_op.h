// The OpDesc of one typed call, filled in one place for the Communicator's calls
// (communicator.cc) and the torch- and MindSpore-style conveniences over them.
//
//   OpDesc d = make_op(OpKind::reduce, send, recv, send.count(), opts, where, {.op = op, .root =
//   0});
#pragma once

#include "twinccl/communicator.h"

namespace twinccl {

// What some calls add to the fields every call has: the reduction, the root, the peer.
struct Roles {
  ReduceOp op = ReduceOp::sum();
  int root = -1;
  int peer = -1;
};

OpDesc make_op(OpKind kind, const void* send, void* recv, std::size_t count, DataType dtype,
               const CallOptions& opts, const Where& where, const Roles& roles = {});

// From Buffers (an empty one: no pointer, capacity 0): their sizes are known, and their memory
// is kept alive until the operation completed. The data type is send's, else recv's.
OpDesc make_op(OpKind kind, const Buffer& send, const Buffer& recv, std::size_t count,
               const CallOptions& opts, const Where& where, const Roles& roles = {});

// Refuses `call` in its own words: "<call> on comm .. rank .. (where): <what>" is told to
// comm.rejected() (the peers learn why this rank never joined them) and thrown as InvalidArgument.
[[noreturn]] void reject_call(Communicator& comm, std::string_view call, const Where& where,
                              const std::string& what);

}  // namespace twinccl
