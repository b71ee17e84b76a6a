// TracingCommunicator: forwards every call and records it in a TraceRecorder.
//
// How it works. A blocking call is recorded as op + wait (the wait began when the call was made).
// An async call returns a Work whose first successful wait()/test()/wait_for() records the wait.
// Inside group_start/group_end every op gets the group's id and is waited (together) when the
// outermost group_end blocks, or through the group's Work when it is async. split() learns the
// world ranks of the new communicator with an all_gather on it (not recorded).
#include <cstdint>

#include "twinccl/emu/trace.h"
#include "twinccl/errors.h"

namespace twinccl::emu {
namespace {

class TracedWork final : public WorkState {
 public:
  TracedWork(Work inner, TraceRecorder& recorder, int rank, std::vector<int> ops)
      : inner_(std::move(inner)), recorder_(recorder), rank_(rank), ops_(std::move(ops)) {}
  void wait() override {
    const auto began = TraceRecorder::Clock::now();
    inner_.wait();
    note(began);
  }
  bool test() override {
    const auto began = TraceRecorder::Clock::now();
    const bool done = inner_.test();
    if (done) note(began);
    return done;
  }
  bool wait_for(std::chrono::nanoseconds timeout) override {
    const auto began = TraceRecorder::Clock::now();
    const bool done = inner_.wait_for(timeout);
    if (done) note(began);
    return done;
  }

 private:
  void note(TraceRecorder::Clock::time_point began) {
    if (noted_) return;
    noted_ = true;
    for (int op : ops_) recorder_.record_wait(rank_, op, began);
  }
  Work inner_;
  TraceRecorder& recorder_;
  int rank_;
  std::vector<int> ops_;
  bool noted_ = false;
};

std::vector<int> identity(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

std::vector<std::size_t> traced_counts(const OpDesc& op) {
  switch (op.kind) {
    case OpKind::all_gather_v:
    case OpKind::gather_v:
    case OpKind::reduce_scatter_v: return op.recv_counts;
    case OpKind::scatter_v:
    case OpKind::all_to_all_v: return op.send_counts;  // all_to_all_v: this rank's row
    default: return {};
  }
}

}  // namespace

TracingCommunicator::TracingCommunicator(Communicator& inner, TraceRecorder& recorder, std::vector<int> world_ranks)
    : inner_(inner), recorder_(recorder), world_ranks_(std::move(world_ranks)) {
  if (world_ranks_.empty()) world_ranks_ = identity(inner_.size());
  if (static_cast<int>(world_ranks_.size()) != inner_.size()) {
    throw InvalidArgument("TracingCommunicator on comm '" + inner_.name() + "': " +
                          std::to_string(world_ranks_.size()) + " world ranks given for " +
                          std::to_string(inner_.size()) + " ranks");
  }
}

TracingCommunicator::TracingCommunicator(std::unique_ptr<Communicator> owned, TraceRecorder& recorder,
                                         std::vector<int> world_ranks)
    : TracingCommunicator(*owned, recorder, std::move(world_ranks)) {
  owned_ = std::move(owned);
}

Work TracingCommunicator::submit(OpDesc op) {
  TracedCall call;
  call.comm_name = inner_.name();
  call.comm_ranks = world_ranks_;
  call.kind = op.kind;
  call.count = op.count;
  call.dtype = op.dtype;
  call.root = is_rooted(op.kind) ? op.root : -1;
  call.peer = is_p2p(op.kind) ? op.peer : -1;
  call.counts = traced_counts(op);
  call.algorithm = op.algorithm;
  call.async = op.async_op || group_depth_ > 0;
  call.group = group_depth_ > 0 ? group_ : 0;
  const auto began = TraceRecorder::Clock::now();
  const int id = recorder_.record_op(world_rank(), call);
  if (group_depth_ > 0) {
    group_ops_.push_back(id);
    return inner_.issue(std::move(op));
  }
  const bool async = op.async_op;
  Work work = inner_.issue(std::move(op));
  if (!async) {
    recorder_.record_wait(world_rank(), id, began);
    return work;
  }
  return Work(std::make_shared<TracedWork>(std::move(work), recorder_, world_rank(), std::vector<int>{id}));
}

void TracingCommunicator::group_start(Where where) {
  if (group_depth_++ == 0) {
    group_ = recorder_.open_group(world_rank());
    group_ops_.clear();
  }
  inner_.group_start(where);
}

Work TracingCommunicator::group_end(CallOptions opts, Where where) {
  const auto began = TraceRecorder::Clock::now();
  Work work = inner_.group_end(opts, where);
  if (group_depth_ == 0 || --group_depth_ > 0) return work;
  std::vector<int> ops = std::move(group_ops_);
  group_ops_.clear();
  if (!opts.async_op) {
    for (int op : ops) recorder_.record_wait(world_rank(), op, began);
    return work;
  }
  return Work(std::make_shared<TracedWork>(std::move(work), recorder_, world_rank(), std::move(ops)));
}

void TracingCommunicator::group_abort(Where where) noexcept {
  inner_.group_abort(where);
  if (group_depth_ > 0 && --group_depth_ == 0) group_ops_.clear();  // never issued: no waits to record
}

std::unique_ptr<Communicator> TracingCommunicator::split(int color, int key, std::string new_name, Where where) {
  std::unique_ptr<Communicator> child = inner_.split(color, key, std::move(new_name), where);
  if (!child) return nullptr;
  Buffer mine = child->alloc(1, DataType::int32);
  const auto me = static_cast<std::int32_t>(world_rank());
  mine.copy_from_host(&me, sizeof me);
  Buffer all = child->alloc(static_cast<std::size_t>(child->size()), DataType::int32);
  child->all_gather(mine, all);
  std::vector<int> world;
  for (std::int32_t r : all.to_host<std::int32_t>()) world.push_back(r);
  return std::make_unique<TracingCommunicator>(std::move(child), recorder_, std::move(world));
}

void TracingCommunicator::compute(double seconds) { recorder_.record_compute(world_rank(), seconds); }
void TracingCommunicator::compute_flops(double flops) { recorder_.record_compute_flops(world_rank(), flops); }

}  // namespace twinccl::emu
