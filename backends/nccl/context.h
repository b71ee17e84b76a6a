// What a NCCL communicator shares with the Work handles and buffers it hands out.
//
//   StreamContext: the GPU and the one CUDA stream of a communicator, plus a pool of CUDA events
//                  (buffers keep it alive to order their copies with the collectives);
//   CommContext:   the ncclComm_t, its name/rank/size, the wait timeout, the abort state;
//   AbortSignal:   shared by every communicator of one run_world: raised when a rank failed so
//                  that the others stop waiting (each aborts its own comm from its own thread).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
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

class StreamContext {
 public:
  explicit StreamContext(int device);  // creates a non-blocking stream on `device`
  ~StreamContext();
  StreamContext(const StreamContext&) = delete;
  StreamContext& operator=(const StreamContext&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cudaEvent_t take_event();              // from the pool, or a new timing-disabled event
  void give_back(cudaEvent_t event);     // thread-safe

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  std::mutex mutex_;
  std::vector<cudaEvent_t> free_events_;
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
  CommContext(ncclComm_t comm, std::shared_ptr<StreamContext> stream, int rank, int size, std::string name,
              std::chrono::nanoseconds timeout, std::shared_ptr<AbortSignal> signal);
  ~CommContext();  // ncclCommFinalize + ncclCommDestroy, or nothing when aborted
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
  // Throws AbortedError when this communicator was aborted (names the reason).
  void throw_if_aborted(const std::string& what) const;
  // Throws (after aborting the comm) when NCCL reports an asynchronous error or another rank of
  // this run raised the abort signal. Cheap enough to call while polling.
  void check_health(const std::string& what);
  // ncclCommAbort once; later calls only keep the first reason.
  void abort(const std::string& reason);

 private:
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
