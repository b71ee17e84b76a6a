// CallObserver: told of every call a Communicator issues, once the call passed its checks, and of
// the groups, splits and declared compute around them. Recording a trace is one
// (twinccl/trace/recorder.h); the call itself is validated once, by Communicator::issue.
//
//   struct Counter final : CallObserver {
//     int calls = 0;
//     Work call(Communicator&, const OpDesc&, const Proceed& proceed) override { ++calls; return
//     proceed(); }
//   };
//   comm.observe(std::make_shared<Counter>());   // every later call of comm goes through it
//
// Operations, declared compute, groups and splits reach the observer on every backend (the
// Communicator base class reports them, around the backend's do_* hooks); a split's child is
// observed by what the observer's split() returns.
#pragma once

#include <functional>
#include <memory>
#include <span>

#include "twinccl/communicator.h"

namespace twinccl {

class CallObserver {
 public:
  using Proceed = std::function<Work()>;
  virtual ~CallObserver() = default;

  // A checked operation of `comm`: proceed() hands it to the backend and returns the Work the
  // caller gets (the observer may return another that wraps it). `op` is valid until proceed().
  virtual Work call(Communicator& comm, const OpDesc& op, const Proceed& proceed) {
    (void)comm;
    (void)op;
    return proceed();
  }
  // One group level opened, closed (proceed() closes it and returns the group's Work) or
  // abandoned by an exception (group_abort: its operations were never issued).
  virtual void group_start(Communicator& comm) { (void)comm; }
  virtual Work group_end(Communicator& comm, const CallOptions& opts, const Proceed& proceed) {
    (void)comm;
    (void)opts;
    return proceed();
  }
  virtual void group_abort(Communicator& comm) noexcept { (void)comm; }
  // split(color, key) of `comm`, told before the backend splits (split is collective: every rank
  // of comm has told its observer before any rank's split returns). Then, on the ranks that got a
  // child, the child's observer (nullptr: the child is not observed).
  virtual void splitting(Communicator& comm, int color, int key) {
    (void)comm;
    (void)color;
    (void)key;
  }
  virtual std::shared_ptr<CallObserver> split(Communicator& parent, Communicator& child) {
    (void)parent;
    (void)child;
    return nullptr;
  }
  // subcommunicator(ranks) of `parent` made `child` on this member (`ranks`: ranks of parent, in
  // the child's order); returns the child's observer (nullptr: the child is not observed).
  virtual std::shared_ptr<CallObserver> subcommunicator(Communicator& parent, Communicator& child,
                                                        std::span<const int> ranks) {
    (void)parent;
    (void)child;
    (void)ranks;
    return nullptr;
  }
  // Communicator::compute / compute_flops (one of seconds, flops is 0).
  virtual void compute(Communicator& comm, double seconds, double flops) {
    (void)comm;
    (void)seconds;
    (void)flops;
  }
};

}  // namespace twinccl
