#include "twinccl/call_layout.h"

#include <algorithm>
#include <cstring>

#include "make_op.h"
#include "twinccl/errors.h"
#include "twinccl/op_traits.h"

namespace twinccl {
namespace {

struct Layout {
  std::size_t recv, send, input_at;  // what recv receives is the result
};

std::size_t elements(Elements e, std::size_t count, int n) {
  if (e == Elements::count) return count;
  return e == Elements::nranks_times_count ? static_cast<std::size_t>(n) * count : 0;
}

// The even collectives' buffers by their rule (op_traits.h).
Layout layout(const CallShape& c, int rank, int n) {
  const OpTraits& t = traits(c.kind);
  if (!t.even_collective()) {
    throw InvalidArgument("setup_call: " + std::string(name(c.kind)) +
                          " is not an even collective");
  }
  const bool root = rank == c.root;
  const bool blocks = t.in_place == InPlace::recv_in_send || t.in_place == InPlace::send_in_recv;
  return {elements(t.output.of(root), c.count, n), elements(t.input.of(root), c.count, n),
          blocks ? static_cast<std::size_t>(rank) * c.count : 0};
}

}  // namespace

CallBytes call_buffer_bytes(const CallShape& shape, int nranks) {
  CallBytes most;
  const std::size_t e = size_of(shape.dtype);
  for (int rank : {shape.root, shape.root == 0 ? 1 : 0}) {  // the root and any other rank
    const Layout l = layout(shape, rank, nranks);
    most.first = std::max(most.first, l.send * e);
    most.second = std::max({most.second, l.recv * e, l.send * e});
  }
  return most;
}

CallArena allocate_call_arena(Communicator& comm, CallBytes largest) {
  return {comm.alloc(largest.first, DataType::int8), comm.alloc(largest.second, DataType::int8),
          comm.alloc(1, DataType::int64)};
}

Buffer view_in(const Buffer& memory, std::size_t count, DataType dtype) {
  return Buffer(memory.memory(), 0, count, dtype);
}

CallSetup setup_call(Communicator& comm, const CallShape& shape, const CallArena* arena) {
  int r = comm.rank();
  Layout l = layout(shape, r, comm.size());
  std::size_t e = size_of(shape.dtype);
  // Buffer `which` (0 or 1) of `count` elements.
  auto take = [&](int which, std::size_t count) {
    if (arena == nullptr) return comm.alloc(count, shape.dtype);
    return view_in(which == 0 ? arena->first : arena->second, count, shape.dtype);
  };
  CallSetup s;
  s.shape = shape;
  s.input_elements = l.send;
  s.result_elements = l.recv;
  const OpTraits& t = traits(shape.kind);
  const bool in_place =
      shape.in_place && t.in_place != InPlace::never && (!t.rooted || r == shape.root);
  s.shape.in_place = in_place;
  if (!in_place) {
    s.send_buffer = take(0, l.send);
    s.recv_buffer = take(1, l.recv);
    s.send = l.send ? s.send_buffer.data() : nullptr;
    s.recv = l.recv ? s.recv_buffer.data() : nullptr;
    s.input_view = s.send_buffer;
    s.result_view = s.recv_buffer.slice(0, l.recv);
    return s;
  }
  switch (t.in_place) {
    case InPlace::recv_in_send:  // recv == send + rank*count inside the big send buffer
      s.recv_buffer = take(1, l.send);
      s.send = s.recv_buffer.data();
      s.recv = static_cast<char*>(s.recv_buffer.data()) + l.input_at * e;
      s.input_view = s.recv_buffer;
      s.result_view = s.recv_buffer.slice(l.input_at, l.recv);
      break;
    case InPlace::send_in_recv:  // send == recv + rank*count inside the big recv buffer
      s.recv_buffer = take(1, l.recv);
      s.recv = s.recv_buffer.data();
      s.send = static_cast<char*>(s.recv_buffer.data()) + l.input_at * e;
      s.input_view = s.recv_buffer.slice(l.input_at, l.send);
      s.result_view = s.recv_buffer.slice(0, l.recv);
      break;
    default:  // all_reduce, broadcast (root), reduce (root): send == recv
      s.recv_buffer = take(1, std::max(l.recv, l.send));
      s.send = s.recv = s.recv_buffer.data();
      s.input_view = s.recv_buffer.slice(0, l.send);
      s.result_view = s.recv_buffer.slice(0, l.recv);
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
  const OpTraits& t = traits(c.kind);
  if (!t.even_collective()) {
    throw InvalidArgument("issue_call: " + std::string(name(c.kind)) +
                          " is not an even collective");
  }
  Roles roles;
  if (t.reducing) roles.op = c.op;
  if (t.rooted) roles.root = c.root;
  return comm.issue(
      make_op(c.kind, s.send, s.recv, c.count, c.dtype, opts, Where::current(), roles));
}

}  // namespace twinccl
