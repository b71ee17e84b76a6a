// The Communicator's typed calls: each fills an OpDesc and issues it (validate, then submit).
#include "twinccl/communicator.h"

#include <exception>
#include <string>

#include "twinccl/errors.h"

namespace twinccl {
namespace {

OpDesc make(OpKind kind, const void* send, void* recv, std::size_t count, DataType dtype,
            const CallOptions& opts, const Where& where) {
  OpDesc op;
  op.kind = kind;
  op.send = send;
  op.recv = recv;
  op.count = count;
  op.dtype = dtype;
  op.async_op = opts.async_op;
  op.algorithm = std::string(opts.algorithm);
  op.where = where;
  return op;
}

std::vector<std::size_t> to_vector(std::span<const std::size_t> s) { return {s.begin(), s.end()}; }

// Buffer overloads: the recv buffer must have the send buffer's data type.
void same_dtype(const char* call, const Buffer& a, const Buffer& b, const Where& where) {
  if (a.dtype() != b.dtype()) {
    throw InvalidArgument(std::string(call) + " (" + describe_call_site(where) + "): send buffer is " +
                          std::string(name(a.dtype())) + " but recv buffer is " + std::string(name(b.dtype())));
  }
}

// count = whole-buffer count divided by nranks, refusing a remainder.
std::size_t per_rank(const char* call, const char* which, std::size_t total, int nranks, const Where& where) {
  auto n = static_cast<std::size_t>(nranks);
  if (total % n != 0) {
    throw InvalidArgument(std::string(call) + " (" + describe_call_site(where) + "): " + which + " buffer has " +
                          std::to_string(total) + " elements, not a multiple of " + std::to_string(nranks) +
                          " ranks");
  }
  return total / n;
}

}  // namespace

Work Communicator::issue(OpDesc op) {
  validate(op, rank(), size(), name());
  return submit(std::move(op));
}

Work Communicator::all_reduce(const void* send, void* recv, std::size_t count, DataType dtype, ReduceOp op,
                              CallOptions opts, Where where) {
  OpDesc d = make(OpKind::all_reduce, send, recv, count, dtype, opts, where);
  d.op = op;
  return issue(std::move(d));
}

Work Communicator::reduce_scatter(const void* send, void* recv, std::size_t recv_count, DataType dtype,
                                  ReduceOp op, CallOptions opts, Where where) {
  OpDesc d = make(OpKind::reduce_scatter, send, recv, recv_count, dtype, opts, where);
  d.op = op;
  return issue(std::move(d));
}

Work Communicator::all_gather(const void* send, void* recv, std::size_t send_count, DataType dtype,
                              CallOptions opts, Where where) {
  return issue(make(OpKind::all_gather, send, recv, send_count, dtype, opts, where));
}

Work Communicator::broadcast(const void* send, void* recv, std::size_t count, DataType dtype, int root,
                             CallOptions opts, Where where) {
  OpDesc d = make(OpKind::broadcast, send, recv, count, dtype, opts, where);
  d.root = root;
  return issue(std::move(d));
}

Work Communicator::reduce(const void* send, void* recv, std::size_t count, DataType dtype, ReduceOp op,
                          int root, CallOptions opts, Where where) {
  OpDesc d = make(OpKind::reduce, send, recv, count, dtype, opts, where);
  d.op = op;
  d.root = root;
  return issue(std::move(d));
}

Work Communicator::all_to_all(const void* send, void* recv, std::size_t count, DataType dtype,
                              CallOptions opts, Where where) {
  return issue(make(OpKind::all_to_all, send, recv, count, dtype, opts, where));
}

Work Communicator::gather(const void* send, void* recv, std::size_t send_count, DataType dtype, int root,
                          CallOptions opts, Where where) {
  OpDesc d = make(OpKind::gather, send, recv, send_count, dtype, opts, where);
  d.root = root;
  return issue(std::move(d));
}

Work Communicator::scatter(const void* send, void* recv, std::size_t recv_count, DataType dtype, int root,
                           CallOptions opts, Where where) {
  OpDesc d = make(OpKind::scatter, send, recv, recv_count, dtype, opts, where);
  d.root = root;
  return issue(std::move(d));
}

Work Communicator::send(const void* data, std::size_t count, DataType dtype, int peer, CallOptions opts,
                        Where where) {
  OpDesc d = make(OpKind::send, data, nullptr, count, dtype, opts, where);
  d.peer = peer;
  return issue(std::move(d));
}

Work Communicator::recv(void* data, std::size_t count, DataType dtype, int peer, CallOptions opts, Where where) {
  OpDesc d = make(OpKind::recv, nullptr, data, count, dtype, opts, where);
  d.peer = peer;
  return issue(std::move(d));
}

Work Communicator::barrier(CallOptions opts, Where where) {
  return issue(make(OpKind::barrier, nullptr, nullptr, 0, DataType::uint8, opts, where));
}

Work Communicator::all_gather_v(const void* send, void* recv, std::span<const std::size_t> recv_counts,
                                std::span<const std::size_t> recv_displs, DataType dtype, CallOptions opts,
                                Where where) {
  OpDesc d = make(OpKind::all_gather_v, send, recv, 0, dtype, opts, where);
  d.recv_counts = to_vector(recv_counts);
  d.recv_displs = to_vector(recv_displs);
  return issue(std::move(d));
}

Work Communicator::reduce_scatter_v(const void* send, void* recv, std::span<const std::size_t> recv_counts,
                                    std::span<const std::size_t> send_displs, DataType dtype, ReduceOp op,
                                    CallOptions opts, Where where) {
  OpDesc d = make(OpKind::reduce_scatter_v, send, recv, 0, dtype, opts, where);
  d.op = op;
  d.recv_counts = to_vector(recv_counts);
  d.send_displs = to_vector(send_displs);
  return issue(std::move(d));
}

Work Communicator::all_to_all_v(const void* send, std::span<const std::size_t> send_counts,
                                std::span<const std::size_t> send_displs, void* recv,
                                std::span<const std::size_t> recv_counts,
                                std::span<const std::size_t> recv_displs, DataType dtype, CallOptions opts,
                                Where where) {
  OpDesc d = make(OpKind::all_to_all_v, send, recv, 0, dtype, opts, where);
  d.send_counts = to_vector(send_counts);
  d.send_displs = to_vector(send_displs);
  d.recv_counts = to_vector(recv_counts);
  d.recv_displs = to_vector(recv_displs);
  return issue(std::move(d));
}

Work Communicator::gather_v(const void* send, void* recv, std::span<const std::size_t> counts,
                            std::span<const std::size_t> displs, DataType dtype, int root, CallOptions opts,
                            Where where) {
  OpDesc d = make(OpKind::gather_v, send, recv, 0, dtype, opts, where);
  d.root = root;
  d.recv_counts = to_vector(counts);
  d.recv_displs = to_vector(displs);
  return issue(std::move(d));
}

Work Communicator::scatter_v(const void* send, void* recv, std::span<const std::size_t> counts,
                             std::span<const std::size_t> displs, DataType dtype, int root, CallOptions opts,
                             Where where) {
  OpDesc d = make(OpKind::scatter_v, send, recv, 0, dtype, opts, where);
  d.root = root;
  d.send_counts = to_vector(counts);
  d.send_displs = to_vector(displs);
  return issue(std::move(d));
}

// ---- Buffer overloads ----

Work Communicator::all_reduce(const Buffer& send, const Buffer& recv, ReduceOp op, CallOptions opts, Where where) {
  same_dtype("all_reduce", send, recv, where);
  OpDesc d = make(OpKind::all_reduce, send.data(), recv.data(), send.count(), send.dtype(), opts, where);
  d.op = op;
  d.send_capacity = send.count();
  d.recv_capacity = recv.count();
  return issue(std::move(d));
}

Work Communicator::reduce_scatter(const Buffer& send, const Buffer& recv, ReduceOp op, CallOptions opts,
                                  Where where) {
  same_dtype("reduce_scatter", send, recv, where);
  OpDesc d = make(OpKind::reduce_scatter, send.data(), recv.data(), recv.count(), send.dtype(), opts, where);
  d.op = op;
  d.send_capacity = send.count();
  d.recv_capacity = recv.count();
  return issue(std::move(d));
}

Work Communicator::all_gather(const Buffer& send, const Buffer& recv, CallOptions opts, Where where) {
  same_dtype("all_gather", send, recv, where);
  OpDesc d = make(OpKind::all_gather, send.data(), recv.data(), send.count(), send.dtype(), opts, where);
  d.send_capacity = send.count();
  d.recv_capacity = recv.count();
  return issue(std::move(d));
}

Work Communicator::broadcast(const Buffer& buffer, int root, CallOptions opts, Where where) {
  OpDesc d = make(OpKind::broadcast, buffer.data(), buffer.data(), buffer.count(), buffer.dtype(), opts, where);
  d.root = root;
  d.send_capacity = d.recv_capacity = buffer.count();
  return issue(std::move(d));
}

Work Communicator::reduce(const Buffer& send, const Buffer& recv, ReduceOp op, int root, CallOptions opts,
                          Where where) {
  if (recv) same_dtype("reduce", send, recv, where);
  OpDesc d = make(OpKind::reduce, send.data(), recv.data(), send.count(), send.dtype(), opts, where);
  d.op = op;
  d.root = root;
  d.send_capacity = send.count();
  d.recv_capacity = recv ? recv.count() : 0;
  return issue(std::move(d));
}

Work Communicator::all_to_all(const Buffer& send, const Buffer& recv, CallOptions opts, Where where) {
  same_dtype("all_to_all", send, recv, where);
  std::size_t count = per_rank("all_to_all", "send", send.count(), size(), where);
  OpDesc d = make(OpKind::all_to_all, send.data(), recv.data(), count, send.dtype(), opts, where);
  d.send_capacity = send.count();
  d.recv_capacity = recv.count();
  return issue(std::move(d));
}

Work Communicator::send(const Buffer& data, int peer, CallOptions opts, Where where) {
  OpDesc d = make(OpKind::send, data.data(), nullptr, data.count(), data.dtype(), opts, where);
  d.peer = peer;
  d.send_capacity = data.count();
  return issue(std::move(d));
}

Work Communicator::recv(const Buffer& data, int peer, CallOptions opts, Where where) {
  OpDesc d = make(OpKind::recv, nullptr, data.data(), data.count(), data.dtype(), opts, where);
  d.peer = peer;
  d.recv_capacity = data.count();
  return issue(std::move(d));
}

Group::Group(Communicator& comm, Where where) : comm_(comm), uncaught_(std::uncaught_exceptions()) {
  comm_.group_start(where);
}

Group::~Group() noexcept(false) {
  if (std::uncaught_exceptions() > uncaught_) return;  // unwinding: the communicator aborts the group
  comm_.group_end();
}

}  // namespace twinccl
