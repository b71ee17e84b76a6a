// Work on CUDA events with polling waits (see work.h).
//
// How it works: poll cudaEventQuery; spin briefly (small collectives finish in microseconds),
// then sleep with a growing pause up to 1 ms. Every round after the spin also asks NCCL for an
// asynchronous error and looks at the run's abort signal, so a failed peer or a failed sibling
// thread ends the wait with an error instead of a hang.
#include "nccl/work.h"

#include <thread>

#include "nccl/check.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {

using Clock = std::chrono::steady_clock;

Completion::Completion(std::shared_ptr<CommContext> ctx, std::string_view what,
                       std::uint64_t op_number, std::source_location where)
    : ctx_(std::move(ctx)),
      what_(what),
      op_number_(op_number),
      where_(where),
      issued_(Clock::now()) {}

Completion::~Completion() {
  if (event_ != nullptr) ctx_->stream()->give_back(event_);
}

void Completion::record() {
  if (ctx_->stream()->capturing()) {  // a CUDA event recorded inside a capture cannot be polled
    captured_ = true;
    return;
  }
  cudaEvent_t e = ctx_->stream()->take_event();
  const cudaError_t rc = api().cudaEventRecord(e, ctx_->cuda_stream());
  if (rc != cudaSuccess) {
    ctx_->stream()->give_back(e);
    throw_cuda_error(rc, "cudaEventRecord after " + describe());
  }
  event_ = e;
  issued_ = Clock::now();
}

std::string Completion::describe() const {
  return call_site_text(std::string(what_) + " #" + std::to_string(op_number_), ctx_->name(),
                        ctx_->rank(), where_);
}

namespace {

[[noreturn]] void refuse_captured(const Completion& c, const char* how) {
  throw InvalidArgument(c.describe() + ": " + how +
                        " an operation captured into a CUDA graph (begin_capture): it runs only "
                        "when the graph is launched; wait for launch_capture()'s Work instead");
}

}  // namespace

bool NcclWork::poll(Clock::time_point until) {
  if (completion_->captured()) refuse_captured(*completion_, "waiting on");
  if (!completion_->recorded()) {
    throw InvalidArgument(
        completion_->describe() +
        ": waiting on an operation of a group that is still open; call group_end() first");
  }
  const Clock::time_point deadline = completion_->issued() + ctx_->timeout();
  const Clock::time_point spin_until = Clock::now() + std::chrono::microseconds(50);
  auto pause = std::chrono::microseconds(10);
  for (;;) {
    if (ctx_->aborted()) ctx_->throw_if_aborted(completion_->describe());
    const cudaError_t rc = api().cudaEventQuery(completion_->event());
    if (rc == cudaSuccess) return true;
    if (rc != cudaErrorNotReady) throw_cuda_error(rc, "waiting for " + completion_->describe());
    const Clock::time_point now = Clock::now();
    if (now < spin_until && now < until) continue;
    ctx_->check_health(completion_->describe());
    if (now >= deadline) {
      const auto seconds = std::chrono::duration<double>(ctx_->timeout()).count();
      const std::string message =
          completion_->describe() + ": not finished " + std::to_string(seconds) +
          " s after it was issued (TWINCCL_TIMEOUT_S); communicator aborted";
      ctx_->abort(message);
      throw TimeoutError(message);
    }
    if (now >= until) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(pause, until - now));
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

void NcclWork::wait() { poll(Clock::time_point::max()); }

bool NcclWork::test() {
  if (completion_->captured()) refuse_captured(*completion_, "testing");
  if (!completion_->recorded()) return false;
  if (ctx_->aborted()) return true;  // finished, badly: wait() reports it
  const cudaError_t rc = api().cudaEventQuery(completion_->event());
  return rc != cudaErrorNotReady;  // success, or an error wait() will report
}

void NcclWork::wait_stream(void* stream) {
  if (completion_->captured()) refuse_captured(*completion_, "wait_stream on");
  if (!completion_->recorded()) {
    throw InvalidArgument(
        completion_->describe() +
        ": wait_stream on an operation of a group that is still open; call group_end() first");
  }
  ctx_->throw_if_aborted(completion_->describe());
  check_cuda(api().cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), completion_->event(), 0),
             "wait_stream for " + completion_->describe());
}

bool NcclWork::wait_for(std::chrono::nanoseconds timeout) {
  const Clock::time_point now = Clock::now();
  const Clock::time_point until =
      timeout >= Clock::time_point::max() - now ? Clock::time_point::max() : now + timeout;
  return poll(until);
}

}  // namespace twinccl::nccl
