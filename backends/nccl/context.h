// What a NCCL communicator shares with the Work handles and buffers it hands out.
//
//   StreamContext: the GPU and the one CUDA stream of a communicator, plus a pool of CUDA events
//                  (buffers keep it alive to order their copies with the collectives);
//   CommContext:   the ncclComm_t, its name/rank/size, the wait timeout, the abort state;
//   AbortSignal:   shared by every communicator of one run_world: raised when a rank failed so
//                  that the others stop waiting (each aborts its own comm from its own thread).
//
// Every wait here polls (cudaStreamQuery, ncclCommGetAsyncError) until a deadline, the
// communicator's abort or the run's abort signal: nothing calls cudaStreamSynchronize or a
// blocking NCCL call. Communicators are non-blocking (ncclConfig_t::blocking = 0), as NCCL
// requires for an abort that is safe during init, split, connection setup and finalize.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace twinccl::nccl {

// Sets the current CUDA device for a scope when it differs, and restores it.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  int device_ = -1;
};

struct AbortSignal;

class StreamContext {
 public:
  // Creates a non-blocking stream on `device`. `timeout` bounds every wait for this stream.
  StreamContext(int device, std::chrono::nanoseconds timeout, std::shared_ptr<AbortSignal> signal);
  ~StreamContext();
  StreamContext(const StreamContext&) = delete;
  StreamContext& operator=(const StreamContext&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  std::chrono::nanoseconds timeout() const { return timeout_; }
  cudaEvent_t take_event();           // from the pool, or a new timing-disabled event
  void give_back(cudaEvent_t event);  // thread-safe
  // The one event ordering.cc records on another stream just before this stream waits for it
  // (cudaStreamWaitEvent takes the event's state at the call, so one event serves every launch):
  // no pool, no lock on the launch path. Only the thread launching on this stream uses it (NCCL
  // allows one thread at a time per communicator).
  cudaEvent_t ordering_event();
  // The communicator using this stream sets how to abort it (buffers call it, see below).
  void set_abort(std::function<void(const std::string&)> abort);
  // Polls cudaStreamQuery until the stream drained or `timeout` passed. When the run's abort
  // signal is raised meanwhile, aborts the communicator (so NCCL's work ends) and keeps polling.
  // Throws BackendError on a CUDA error, InvalidArgument while the stream is captured (graph.h).
  enum class Drain { idle, aborted, timed_out };
  Drain drain(const std::string& what);
  // A buffer or communicator is destroyed while an exception unwinds with work still queued:
  // raise the run's abort signal FIRST (peers stop waiting at once), then abort the communicator
  // so the queued work ends and the memory may be freed.
  void fail_fast(const std::string& why);
  // Compute capability major of the device (cached).
  int sm_major();
  // Between GraphCapture's begin and end (graph.h) this stream is being captured into a CUDA graph:
  // launches are then neither ordered after other streams (a capture may not wait for work outside
  // it: cudaErrorStreamCaptureIsolation) nor followed by a completion event. Rank thread only.
  bool capturing() const { return capturing_; }
  void set_capturing(bool on) { capturing_ = on; }

 private:
  int device_;
  std::chrono::nanoseconds timeout_;
  std::shared_ptr<AbortSignal> signal_;
  cudaStream_t stream_ = nullptr;
  std::mutex mutex_;
  std::vector<cudaEvent_t> free_events_;
  std::function<void(const std::string&)> abort_;
  std::atomic<bool> aborted_{false};
  int sm_major_ = -1;
  bool capturing_ = false;
  cudaEvent_t ordering_event_ = nullptr;
};

struct AbortSignal {
  std::atomic<bool> raised{false};
  std::mutex mutex;
  std::string reason;
  void raise(const std::string& why);  // first reason wins
  std::string why();
};

class CommContext {
 public:
  // `comm` may be set later (set_comm): the name must live before ncclCommInitRankConfig or
  // ncclCommSplit is called, because NCCL keeps config.commName (name().c_str()) until it is ready.
  CommContext(ncclComm_t comm, std::shared_ptr<StreamContext> stream, int rank, int size,
              std::string name, std::chrono::nanoseconds timeout,
              std::shared_ptr<AbortSignal> signal);
  // Non-blocking ncclCommFinalize polled until done (deadline: the timeout), then
  // ncclCommDestroy; ncclCommAbort instead when finalizing fails, times out or the run aborted.
  ~CommContext();
  void set_comm(ncclComm_t comm, int rank, int size);
  CommContext(const CommContext&) = delete;
  CommContext& operator=(const CommContext&) = delete;

  ncclComm_t comm() const { return comm_; }
  const std::shared_ptr<StreamContext>& stream() const { return stream_; }
  cudaStream_t cuda_stream() const { return stream_->stream(); }
  int device() const { return stream_->device(); }
  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& name() const { return name_; }
  std::chrono::nanoseconds timeout() const { return timeout_; }
  const std::shared_ptr<AbortSignal>& signal() const { return signal_; }

  bool aborted() const { return aborted_.load(); }
  // Not aborted and ncclCommGetAsyncError answers ncclSuccess: another NCCL call on the comm is
  // allowed (NCCL refuses one while the previous call is still ncclInProgress). Never throws.
  bool ready() const;
  // Throws AbortedError when this communicator was aborted (names the reason).
  void throw_if_aborted(const std::string& what) const;
  // Throws (after aborting the comm) when NCCL reports an asynchronous error or another rank of
  // this run raised the abort signal. Cheap enough to call while polling.
  void check_health(const std::string& what);
  // ncclCommAbort once; later calls only keep the first reason.
  void abort(const std::string& reason);
  // After a call on this non-blocking communicator (init, split, a launch, group end): polls
  // ncclCommGetAsyncError until it is no longer ncclInProgress, so the work is queued on the stream
  // before anything is recorded behind it. Aborts and throws TimeoutError past the timeout,
  // AbortedError when the run's signal is raised, BackendError on an NCCL error.
  void wait_ready(const std::string& what);
  // The same, with the message built only when the communicator is not ready at once (the launch
  // path: a ready communicator costs one ncclCommGetAsyncError and no string work).
  template <class What>
  void wait_ready_lazy(What&& what) {
    if (ready_now()) return;
    wait_ready(what());
  }

 private:
  bool ready_now() const;  // ncclCommGetAsyncError says ncclSuccess (aborted or not)

  ncclComm_t comm_;
  std::shared_ptr<StreamContext> stream_;
  int rank_;
  int size_;
  std::string name_;
  std::chrono::nanoseconds timeout_;
  std::shared_ptr<AbortSignal> signal_;
  mutable std::mutex mutex_;
  std::atomic<bool> aborted_{false};
  std::string abort_reason_;
};

}  // namespace twinccl::nccl
