// Work on the NCCL backend: a CUDA event recorded on the communicator's stream after the op.
//
//   auto done = std::make_shared<Completion>(ctx, name(OpKind::all_reduce), 12, where);
//   enqueue(...); done->record();                       // or, in a group, at group_end
//   Work w(std::make_shared<NcclWork>(ctx, done)); w.wait();
//
// test() is cudaEventQuery. wait()/wait_for() poll cudaEventQuery and, between polls,
// ncclCommGetAsyncError and the run's abort signal (a blocking cudaEventSynchronize could never
// notice a dead peer). An op still running `timeout` after it was issued aborts the communicator
// (ncclCommAbort) and throws TimeoutError; wait_for's own shorter timeout only returns false.
// wait_stream(s) is cudaStreamWaitEvent(s, event): the GPU stream s waits, the host does not.
// An op captured into a CUDA graph has not run: waiting for it is an InvalidArgument.
#pragma once

#include <chrono>
#include <memory>
#include <source_location>
#include <string_view>

#include "nccl/context.h"
#include "twinccl/operation.h"
#include "twinccl/work.h"

namespace twinccl::nccl {

class Completion {
 public:
  // `what`: the operation's name ("all_reduce", "group"); a string literal or name(OpKind).
  Completion(std::shared_ptr<CommContext> ctx, std::string_view what, std::uint64_t op_number,
             std::source_location where);
  ~Completion();
  Completion(const Completion&) = delete;
  Completion& operator=(const Completion&) = delete;

  // Records the event on the communicator's stream (after the op was enqueued). While the stream
  // is captured into a CUDA graph (graph.h) it records nothing and marks the op captured instead.
  void record();
  bool recorded() const { return event_ != nullptr; }
  bool captured() const { return captured_; }
  cudaEvent_t event() const { return event_; }
  std::chrono::steady_clock::time_point issued() const { return issued_; }
  // "all_reduce #12 on comm 'world' rank 3 (train.cc:88)": built only when needed.
  std::string describe() const;

 private:
  std::shared_ptr<CommContext> ctx_;
  std::string_view what_;
  std::uint64_t op_number_;
  std::source_location where_;
  std::chrono::steady_clock::time_point issued_;
  cudaEvent_t event_ = nullptr;
  bool captured_ = false;
};

class NcclWork final : public WorkState {
 public:
  NcclWork(std::shared_ptr<CommContext> ctx, std::shared_ptr<Completion> completion)
      : ctx_(std::move(ctx)), completion_(std::move(completion)) {}

  void wait() override;
  bool test() override;
  bool wait_for(std::chrono::nanoseconds timeout) override;
  void wait_stream(void* stream) override;

 private:
  // Polls until done (true), `until` passed (false), or throws on error / communicator timeout.
  bool poll(std::chrono::steady_clock::time_point until);

  std::shared_ptr<CommContext> ctx_;
  std::shared_ptr<Completion> completion_;
};

}  // namespace twinccl::nccl
