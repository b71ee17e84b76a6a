// The Communicator's typed calls: each fills an OpDesc and issues it (validate, then submit).
// Groups, splits and alloc: the checks every backend needs, made here once, then the backend's
// do_* hook (communicator.h).
#include "twinccl/communicator.h"

#include <exception>
#include <string>

#include "make_op.h"
#include "thread_group.h"
#include "twinccl/call_observer.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/split_names.h"

namespace twinccl {
namespace {

std::vector<std::size_t> to_vector(std::span<const std::size_t> s) { return {s.begin(), s.end()}; }

}  // namespace

OpDesc make_op(OpKind kind, const void* send, void* recv, std::size_t count, DataType dtype,
               const CallOptions& opts, const Where& where, const Roles& roles) {
  OpDesc op;
  op.kind = kind;
  op.send = send;
  op.recv = recv;
  op.count = count;
  op.dtype = dtype;
  op.async_op = opts.async_op;
  op.algorithm = std::string(opts.algorithm);
  op.where = where;
  op.op = roles.op;
  op.root = roles.root;
  op.peer = roles.peer;
  return op;
}

OpDesc make_op(OpKind kind, const Buffer& send, const Buffer& recv, std::size_t count,
               const CallOptions& opts, const Where& where, const Roles& roles) {
  OpDesc op = make_op(kind, send.data(), recv.data(), count, (send ? send : recv).dtype(), opts,
                      where, roles);
  op.send_capacity = send.count();
  op.recv_capacity = recv.count();
  op.send_owner = send.memory();
  op.recv_owner = recv.memory();
  return op;
}

Work Communicator::issue(OpDesc op) {
  try {
    validate(op, rank(), size(), name());
  } catch (const Error& e) {
    rejected(op, e.what());
    throw;
  }
  if (thread_group_of_other(this)) reject(op, thread_group_refusal());
  if (!observer_) return submit_holding_buffers(std::move(op));
  const std::shared_ptr<CallObserver> observer = observer_;  // the call may change observer_
  return observer->call(*this, op, [&] { return submit_holding_buffers(std::move(op)); });
}

Work Communicator::submit_holding_buffers(OpDesc op) {
  if (!op.async_op || (!op.send_owner && !op.recv_owner)) return submit(std::move(op));
  // The Work holds the buffers too (torch's rule), whatever the backend does with the op.
  std::shared_ptr<const void> send_owner = op.send_owner, recv_owner = op.recv_owner;
  Work work = submit(std::move(op));
  auto owners =
      std::make_shared<std::pair<std::shared_ptr<const void>, std::shared_ptr<const void>>>(
          std::move(send_owner), std::move(recv_owner));
  return keep_alive(std::move(work), std::move(owners));
}

void Communicator::compute(double seconds) {
  if (observer_) observer_->compute(*this, seconds, 0.0);
}

void Communicator::compute_flops(double flops) {
  if (observer_) observer_->compute(*this, 0.0, flops);
}

Communicator::~Communicator() { thread_group_forget(this); }

Buffer Communicator::alloc(std::size_t count, DataType dtype) {
  return do_alloc(count, dtype, alloc_bytes(name(), rank(), count, dtype));  // names comm, rank
}

void Communicator::group_start(Where where) {
  if (thread_group_of_other(this)) reject_call(*this, "group_start", where, thread_group_refusal());
  const std::shared_ptr<CallObserver> observer = observer_;
  if (observer) observer->group_start(*this);
  try {
    do_group_start(where);
  } catch (...) {
    if (observer) observer->group_abort(*this);  // the level the observer was told never opened
    throw;
  }
  thread_group_opened(this, name(), where);
}

Work Communicator::group_end(CallOptions opts, Where where) {
  const bool mine = thread_group_of(this);  // else the backend refuses: no group is open
  const std::shared_ptr<CallObserver> observer = observer_;
  auto end = [&] { return do_group_end(opts, where); };
  try {
    Work work = observer ? observer->group_end(*this, opts, end) : end();
    if (mine) thread_group_closed(this);
    return work;
  } catch (...) {
    if (mine) thread_group_closed(this);  // the backend closed the level all the same
    throw;
  }
}

void Communicator::group_abort(Where where) noexcept {
  if (!thread_group_of(this)) return;  // nothing open here, or another thread's group
  if (do_group_abort(where)) {
    if (observer_) observer_->group_abort(*this);
    thread_group_closed(this);
    return;
  }
  CallOptions async;
  async.async_op = true;
  try {
    group_end(async, where);
  } catch (...) {  // the group is closed either way; its error belongs to its operations
  }
}

bool Communicator::do_group_abort(Where where) noexcept {
  (void)where;
  return false;
}

std::unique_ptr<Communicator> Communicator::split(int color, int key, std::string new_name,
                                                  Where where) {
  if (thread_group_of_other(this)) reject_call(*this, "split", where, thread_group_refusal());
  if (thread_group_of(this)) {
    reject_call(*this, "split", where,
                "split inside the group opened at " + describe_call_site(thread_group_start()) +
                    " (call group_end first)");
  }
  if (color < kNoColor) {
    reject_call(*this, "split", where,
                "color=" + std::to_string(color) + " is negative; use kNoColor to opt out");
  }
  // A name over kMaxCommNameBytes or holding a control byte is refused before the collective.
  if (std::string why = split_name_problem(new_name); !why.empty())
    reject_call(*this, "split", where, why);
  const std::shared_ptr<CallObserver> observer = observer_;
  if (observer) observer->splitting(*this, color, key);
  std::unique_ptr<Communicator> child = do_split(color, key, std::move(new_name), where);
  if (observer && child) child->observe(observer->split(*this, *child));
  return child;
}

void Communicator::reject(const OpDesc& op, const std::string& message) {
  std::string text =
      call_site_text(twinccl::name(op.kind), name(), rank(), op.where) + ": " + message;
  rejected(op, text);
  throw InvalidArgument(text);
}

void reject_call(Communicator& comm, std::string_view call, const Where& where,
                 const std::string& what) {
  std::string text = call_site_text(call, comm.name(), comm.rank(), where) + ": " + what;
  comm.rejected(OpDesc{}, text);
  throw InvalidArgument(text);
}

// Buffer overloads: the recv buffer must have the send buffer's data type.
void Communicator::same_dtype(const OpDesc& op, const Buffer& send, const Buffer& recv) {
  if (send.dtype() != recv.dtype()) {
    reject(op, "send buffer is " + std::string(twinccl::name(send.dtype())) +
                   " but recv buffer is " + std::string(twinccl::name(recv.dtype())));
  }
}

// count = whole-buffer count divided by nranks, refusing a remainder.
std::size_t Communicator::per_rank(const OpDesc& op, const char* which, std::size_t total) {
  auto n = static_cast<std::size_t>(size());
  if (total % n != 0) {
    reject(op, std::string(which) + " buffer has " + std::to_string(total) +
                   " elements, not a multiple of " + std::to_string(size()) + " ranks");
  }
  return total / n;
}

Work Communicator::all_reduce(const void* send, void* recv, std::size_t count, DataType dtype,
                              ReduceOp op, CallOptions opts, Where where) {
  return issue(make_op(OpKind::all_reduce, send, recv, count, dtype, opts, where, {.op = op}));
}

Work Communicator::reduce_scatter(const void* send, void* recv, std::size_t recv_count,
                                  DataType dtype, ReduceOp op, CallOptions opts, Where where) {
  return issue(
      make_op(OpKind::reduce_scatter, send, recv, recv_count, dtype, opts, where, {.op = op}));
}

Work Communicator::all_gather(const void* send, void* recv, std::size_t send_count, DataType dtype,
                              CallOptions opts, Where where) {
  return issue(make_op(OpKind::all_gather, send, recv, send_count, dtype, opts, where));
}

Work Communicator::broadcast(const void* send, void* recv, std::size_t count, DataType dtype,
                             int root, CallOptions opts, Where where) {
  return issue(make_op(OpKind::broadcast, send, recv, count, dtype, opts, where, {.root = root}));
}

Work Communicator::reduce(const void* send, void* recv, std::size_t count, DataType dtype,
                          ReduceOp op, int root, CallOptions opts, Where where) {
  return issue(
      make_op(OpKind::reduce, send, recv, count, dtype, opts, where, {.op = op, .root = root}));
}

Work Communicator::all_to_all(const void* send, void* recv, std::size_t count, DataType dtype,
                              CallOptions opts, Where where) {
  return issue(make_op(OpKind::all_to_all, send, recv, count, dtype, opts, where));
}

Work Communicator::gather(const void* send, void* recv, std::size_t send_count, DataType dtype,
                          int root, CallOptions opts, Where where) {
  return issue(make_op(OpKind::gather, send, recv, send_count, dtype, opts, where, {.root = root}));
}

Work Communicator::scatter(const void* send, void* recv, std::size_t recv_count, DataType dtype,
                           int root, CallOptions opts, Where where) {
  return issue(
      make_op(OpKind::scatter, send, recv, recv_count, dtype, opts, where, {.root = root}));
}

Work Communicator::send(const void* data, std::size_t count, DataType dtype, int peer,
                        CallOptions opts, Where where) {
  return issue(make_op(OpKind::send, data, nullptr, count, dtype, opts, where, {.peer = peer}));
}

Work Communicator::recv(void* data, std::size_t count, DataType dtype, int peer, CallOptions opts,
                        Where where) {
  return issue(make_op(OpKind::recv, nullptr, data, count, dtype, opts, where, {.peer = peer}));
}

Work Communicator::barrier(CallOptions opts, Where where) {
  return issue(make_op(OpKind::barrier, nullptr, nullptr, 0, DataType::uint8, opts, where));
}

Work Communicator::all_gather_v(const void* send, void* recv,
                                std::span<const std::size_t> recv_counts,
                                std::span<const std::size_t> recv_displs, DataType dtype,
                                CallOptions opts, Where where) {
  OpDesc d = make_op(OpKind::all_gather_v, send, recv, 0, dtype, opts, where);
  d.recv_counts = to_vector(recv_counts);
  d.recv_displs = to_vector(recv_displs);
  return issue(std::move(d));
}

Work Communicator::reduce_scatter_v(const void* send, void* recv,
                                    std::span<const std::size_t> recv_counts,
                                    std::span<const std::size_t> send_displs, DataType dtype,
                                    ReduceOp op, CallOptions opts, Where where) {
  OpDesc d = make_op(OpKind::reduce_scatter_v, send, recv, 0, dtype, opts, where, {.op = op});
  d.recv_counts = to_vector(recv_counts);
  d.send_displs = to_vector(send_displs);
  return issue(std::move(d));
}

Work Communicator::all_to_all_v(const void* send, std::span<const std::size_t> send_counts,
                                std::span<const std::size_t> send_displs, void* recv,
                                std::span<const std::size_t> recv_counts,
                                std::span<const std::size_t> recv_displs, DataType dtype,
                                CallOptions opts, Where where) {
  OpDesc d = make_op(OpKind::all_to_all_v, send, recv, 0, dtype, opts, where);
  d.send_counts = to_vector(send_counts);
  d.send_displs = to_vector(send_displs);
  d.recv_counts = to_vector(recv_counts);
  d.recv_displs = to_vector(recv_displs);
  return issue(std::move(d));
}

Work Communicator::gather_v(const void* send, void* recv, std::span<const std::size_t> counts,
                            std::span<const std::size_t> displs, DataType dtype, int root,
                            CallOptions opts, Where where) {
  OpDesc d = make_op(OpKind::gather_v, send, recv, 0, dtype, opts, where, {.root = root});
  d.recv_counts = to_vector(counts);
  d.recv_displs = to_vector(displs);
  return issue(std::move(d));
}

Work Communicator::scatter_v(const void* send, void* recv, std::span<const std::size_t> counts,
                             std::span<const std::size_t> displs, DataType dtype, int root,
                             CallOptions opts, Where where) {
  OpDesc d = make_op(OpKind::scatter_v, send, recv, 0, dtype, opts, where, {.root = root});
  d.send_counts = to_vector(counts);
  d.send_displs = to_vector(displs);
  return issue(std::move(d));
}

// ---- Buffer overloads ----

Work Communicator::all_reduce(const Buffer& send, const Buffer& recv, ReduceOp op, CallOptions opts,
                              Where where) {
  OpDesc d = make_op(OpKind::all_reduce, send, recv, send.count(), opts, where, {.op = op});
  same_dtype(d, send, recv);
  return issue(std::move(d));
}

Work Communicator::reduce_scatter(const Buffer& send, const Buffer& recv, ReduceOp op,
                                  CallOptions opts, Where where) {
  OpDesc d = make_op(OpKind::reduce_scatter, send, recv, recv.count(), opts, where, {.op = op});
  same_dtype(d, send, recv);
  return issue(std::move(d));
}

Work Communicator::all_gather(const Buffer& send, const Buffer& recv, CallOptions opts,
                              Where where) {
  OpDesc d = make_op(OpKind::all_gather, send, recv, send.count(), opts, where);
  same_dtype(d, send, recv);
  return issue(std::move(d));
}

Work Communicator::broadcast(const Buffer& buffer, int root, CallOptions opts, Where where) {
  return issue(
      make_op(OpKind::broadcast, buffer, buffer, buffer.count(), opts, where, {.root = root}));
}

Work Communicator::reduce(const Buffer& send, const Buffer& recv, ReduceOp op, int root,
                          CallOptions opts, Where where) {
  OpDesc d =
      make_op(OpKind::reduce, send, recv, send.count(), opts, where, {.op = op, .root = root});
  if (recv) same_dtype(d, send, recv);
  return issue(std::move(d));
}

Work Communicator::all_to_all(const Buffer& send, const Buffer& recv, CallOptions opts,
                              Where where) {
  OpDesc d = make_op(OpKind::all_to_all, send, recv, 0, opts, where);
  same_dtype(d, send, recv);
  d.count = per_rank(d, "send", send.count());
  return issue(std::move(d));
}

Work Communicator::send(const Buffer& data, int peer, CallOptions opts, Where where) {
  return issue(make_op(OpKind::send, data, {}, data.count(), opts, where, {.peer = peer}));
}

Work Communicator::recv(const Buffer& data, int peer, CallOptions opts, Where where) {
  return issue(make_op(OpKind::recv, {}, data, data.count(), opts, where, {.peer = peer}));
}

Group::Group(Communicator& comm, Where where)
    : comm_(comm), uncaught_(std::uncaught_exceptions()), where_(where) {
  comm_.group_start(where);
}

Group::~Group() noexcept(false) {
  if (!open_) return;
  open_ = false;
  if (std::uncaught_exceptions() > uncaught_) {
    comm_.group_abort(where_);  // unwinding: never leave the group open behind the exception
    return;
  }
  // Named by the Group's own line: the scope's end has no source_location, and the default
  // argument would name this file (before, errors said "group_end ... (communicator.cc:362)").
  comm_.group_end({}, where_);
}

Work Group::end(CallOptions opts, Where where) {
  if (!open_) {
    throw InvalidArgument("Group::end on comm '" + comm_.name() + "' (" +
                          describe_call_site(where) + "): the group opened at " +
                          describe_call_site(where_) + " was already ended");
  }
  open_ = false;  // group_end closes it even when it throws
  return comm_.group_end(opts, where);
}

}  // namespace twinccl
