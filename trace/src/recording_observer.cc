// The recording observer: TraceRecorder::record(comm) attaches one to a rank's communicator.
//
// How it works. A blocking call is recorded as op + wait (the wait began when the call was made).
// An async call returns a Work whose first successful wait()/test()/wait_for() records the wait.
// Inside group_start/group_end every op gets the group's id and is waited (together) when the
// outermost group_end blocks, or through the group's Work when it is async. A split tells the
// recorder this rank's (color, key) before the backend's split; the child's world ranks are then
// the ranks of the same color ordered by (key, rank), as split() orders them (no exchange needed).
// A subcommunicator's members are the parent's ranks it lists.
#include <cstdint>
#include <memory>
#include <numeric>
#include <span>

#include "twinccl/call_observer.h"
#include "twinccl/errors.h"
#include "twinccl/trace/recorder.h"

namespace twinccl::trace {
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
  void abandoned() noexcept override {
    if (inner_.state()) inner_.state()->abandoned();
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

// One per rank and communicator: its world ranks, its open group, the splits it made.
class RecordingObserver final : public CallObserver {
 public:
  RecordingObserver(TraceRecorder& recorder, TraceCommunicator comm, int world_rank)
      : recorder_(recorder), comm_(std::move(comm)), world_rank_(world_rank) {}

  Work call(Communicator& comm, const OpDesc& desc, const Proceed& proceed) override {
    (void)comm;
    TraceOp op = record_of(desc);
    op.async = desc.async_op || group_depth_ > 0;
    op.group = group_depth_ > 0 ? group_ : 0;
    const bool async = desc.async_op;
    const auto began = TraceRecorder::Clock::now();
    const int id = recorder_.record_op(world_rank_, comm_, std::move(op));
    if (group_depth_ > 0) {
      group_ops_.push_back(id);
      return proceed();
    }
    Work work = proceed();
    if (!async) {
      recorder_.record_wait(world_rank_, id, began);
      return work;
    }
    return Work(std::make_shared<TracedWork>(std::move(work), recorder_, world_rank_,
                                             std::vector<int>{id}));
  }

  void group_start(Communicator& comm) override {
    (void)comm;
    if (group_depth_++ == 0) {
      group_ = recorder_.open_group(world_rank_);
      group_ops_.clear();
    }
  }

  Work group_end(Communicator& comm, const CallOptions& opts, const Proceed& proceed) override {
    (void)comm;
    const auto began = TraceRecorder::Clock::now();
    Work work = proceed();
    if (group_depth_ == 0 || --group_depth_ > 0) return work;
    std::vector<int> ops = std::move(group_ops_);
    group_ops_.clear();
    if (!opts.async_op) {
      for (int op : ops) recorder_.record_wait(world_rank_, op, began);
      return work;
    }
    return Work(
        std::make_shared<TracedWork>(std::move(work), recorder_, world_rank_, std::move(ops)));
  }

  void group_abort(Communicator& comm) noexcept override {
    (void)comm;
    if (group_depth_ > 0 && --group_depth_ == 0)
      group_ops_.clear();  // never issued: no waits to record
  }

  void splitting(Communicator& comm, int color, int key) override {
    last_split_ = splits_++;
    last_color_ = color;
    recorder_.record_split(comm_, last_split_, comm.rank(), color, key);
  }

  std::shared_ptr<CallObserver> split(Communicator& parent, Communicator& child) override {
    (void)parent;
    TraceCommunicator sub{child.name(), recorder_.split_members(comm_, last_split_, last_color_)};
    if (static_cast<int>(sub.ranks.size()) != child.size()) {
      throw InvalidArgument("trace recording: split of comm '" + comm_.name + "' made '" +
                            child.name() + "' of " + std::to_string(child.size()) +
                            " ranks, the recorded colors give " + std::to_string(sub.ranks.size()));
    }
    return std::make_shared<RecordingObserver>(recorder_, std::move(sub), world_rank_);
  }

  // The members are known here: the parent's ranks listed, as world ranks.
  std::shared_ptr<CallObserver> subcommunicator(Communicator& parent, Communicator& child,
                                                std::span<const int> ranks) override {
    (void)parent;
    TraceCommunicator sub{child.name(), {}};
    for (int r : ranks) sub.ranks.push_back(comm_.ranks[static_cast<std::size_t>(r)]);
    return std::make_shared<RecordingObserver>(recorder_, std::move(sub), world_rank_);
  }

  void compute(Communicator& comm, double seconds, double flops) override {
    (void)comm;
    if (flops != 0.0) {
      recorder_.record_compute_flops(world_rank_, flops);
    } else {
      recorder_.record_compute(world_rank_, seconds);
    }
  }

 private:
  TraceRecorder& recorder_;
  TraceCommunicator comm_;
  int world_rank_;
  int group_depth_ = 0;
  int group_ = 0;
  std::vector<int> group_ops_;
  int splits_ = 0;
  int last_split_ = -1;
  int last_color_ = 0;
};

}  // namespace

void TraceRecorder::record(Communicator& comm, std::vector<int> world_ranks) {
  if (world_ranks.empty()) {
    world_ranks.resize(static_cast<std::size_t>(comm.size()));
    std::iota(world_ranks.begin(), world_ranks.end(), 0);
  }
  if (static_cast<int>(world_ranks.size()) != comm.size()) {
    throw InvalidArgument("TraceRecorder::record on comm '" + comm.name() +
                          "': " + std::to_string(world_ranks.size()) + " world ranks given for " +
                          std::to_string(comm.size()) + " ranks");
  }
  const int world_rank = world_ranks[static_cast<std::size_t>(comm.rank())];
  comm.observe(std::make_shared<RecordingObserver>(
      *this, TraceCommunicator{comm.name(), std::move(world_ranks)}, world_rank));
}

}  // namespace twinccl::trace
