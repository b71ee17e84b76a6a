#include "twinccl/call_layout.h"

#include <cstring>

#include "twinccl/errors.h"

namespace twinccl {
namespace {

struct Layout {
  std::size_t recv, send, input_at, result;
};

Layout layout(const CallShape& c, int rank, int n) {
  auto un = static_cast<std::size_t>(n);
  auto r = static_cast<std::size_t>(rank);
  std::size_t k = c.count;
  bool root = rank == c.root;
  switch (c.kind) {
    case OpKind::all_reduce:
      return {k, k, 0, k};
    case OpKind::reduce_scatter:
      return {k, un * k, r * k, k};
    case OpKind::all_gather:
      return {un * k, k, r * k, un * k};
    case OpKind::broadcast:
      return {k, root ? k : 0, 0, k};
    case OpKind::reduce:
      return {root ? k : 0, k, 0, root ? k : 0};
    case OpKind::all_to_all:
      return {un * k, un * k, 0, un * k};
    case OpKind::gather:
      return {root ? un * k : 0, k, r * k, root ? un * k : 0};
    case OpKind::scatter:
      return {k, root ? un * k : 0, r * k, k};
    default:
      throw InvalidArgument("setup_call: " + std::string(name(c.kind)) +
                            " is not an even collective");
  }
}

}  // namespace

CallSetup setup_call(Communicator& comm, const CallShape& shape) {
  int r = comm.rank();
  Layout l = layout(shape, r, comm.size());
  std::size_t e = size_of(shape.dtype);
  CallSetup s;
  s.shape = shape;
  s.input_elements = l.send;
  s.result_elements = l.result;
  bool in_place = shape.in_place && shape.kind != OpKind::all_to_all;
  if ((shape.kind == OpKind::scatter || shape.kind == OpKind::gather) && r != shape.root)
    in_place = false;
  if ((shape.kind == OpKind::broadcast && r != shape.root) ||
      (shape.kind == OpKind::reduce && r != shape.root)) {
    in_place = false;
  }
  s.shape.in_place = in_place;
  if (!in_place) {
    s.send_buffer = comm.alloc(l.send, shape.dtype);
    s.recv_buffer = comm.alloc(l.recv, shape.dtype);
    s.send = l.send ? s.send_buffer.data() : nullptr;
    s.recv = l.recv ? s.recv_buffer.data() : nullptr;
    s.input_view = s.send_buffer;
    s.result_view = s.recv_buffer.slice(0, l.result);
    return s;
  }
  switch (shape.kind) {
    case OpKind::reduce_scatter:
    case OpKind::scatter:  // recv == send + rank*count inside the big send buffer
      s.recv_buffer = comm.alloc(l.send, shape.dtype);
      s.send = s.recv_buffer.data();
      s.recv = static_cast<char*>(s.recv_buffer.data()) + l.input_at * e;
      s.input_view = s.recv_buffer;
      s.result_view = s.recv_buffer.slice(l.input_at, l.result);
      break;
    case OpKind::all_gather:
    case OpKind::gather:  // send == recv + rank*count inside the big recv buffer
      s.recv_buffer = comm.alloc(l.recv, shape.dtype);
      s.recv = s.recv_buffer.data();
      s.send = static_cast<char*>(s.recv_buffer.data()) + l.input_at * e;
      s.input_view = s.recv_buffer.slice(l.input_at, l.send);
      s.result_view = s.recv_buffer.slice(0, l.result);
      break;
    default:  // all_reduce, broadcast (root), reduce (root): send == recv
      s.recv_buffer = comm.alloc(std::max(l.recv, l.send), shape.dtype);
      s.send = s.recv = s.recv_buffer.data();
      s.input_view = s.recv_buffer.slice(0, l.send);
      s.result_view = s.recv_buffer.slice(0, l.result);
      break;
  }
  return s;
}

void CallSetup::fill_input(std::span<const unsigned char> bytes) {
  std::size_t need = input_elements * size_of(shape.dtype);
  if (bytes.size() != need) {
    throw InvalidArgument("CallSetup::fill_input: " + std::to_string(bytes.size()) +
                          " bytes for an input of " + std::to_string(need));
  }
  if (need) input_view.copy_from_host(bytes.data(), need);
}

std::vector<unsigned char> CallSetup::result_bytes() const {
  std::vector<unsigned char> out(result_elements * size_of(shape.dtype));
  if (!out.empty()) result_view.copy_to_host(out.data(), out.size());
  return out;
}

Work issue_call(Communicator& comm, const CallSetup& s, CallOptions opts) {
  const CallShape& c = s.shape;
  switch (c.kind) {
    case OpKind::all_reduce:
      return comm.all_reduce(s.send, s.recv, c.count, c.dtype, c.op, opts);
    case OpKind::reduce_scatter:
      return comm.reduce_scatter(s.send, s.recv, c.count, c.dtype, c.op, opts);
    case OpKind::all_gather:
      return comm.all_gather(s.send, s.recv, c.count, c.dtype, opts);
    case OpKind::broadcast:
      return comm.broadcast(s.send, s.recv, c.count, c.dtype, c.root, opts);
    case OpKind::reduce:
      return comm.reduce(s.send, s.recv, c.count, c.dtype, c.op, c.root, opts);
    case OpKind::all_to_all:
      return comm.all_to_all(s.send, s.recv, c.count, c.dtype, opts);
    case OpKind::gather:
      return comm.gather(s.send, s.recv, c.count, c.dtype, c.root, opts);
    case OpKind::scatter:
      return comm.scatter(s.send, s.recv, c.count, c.dtype, c.root, opts);
    default:
      throw InvalidArgument("issue_call: " + std::string(name(c.kind)) +
                            " is not an even collective");
  }
}

}  // namespace twinccl
