// Device guard, stream + event pool, abort state (see context.h).
#include "nccl/context.h"

#include "nccl/check.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {

DeviceGuard::DeviceGuard(int device) : device_(device) {
  check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device_) check_cuda(cudaSetDevice(device_), "cudaSetDevice(" + std::to_string(device_) + ")");
}

DeviceGuard::~DeviceGuard() {
  if (previous_ != device_ && previous_ >= 0) (void)cudaSetDevice(previous_);
}

StreamContext::StreamContext(int device) : device_(device) {
  DeviceGuard guard(device);
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags on GPU " + std::to_string(device));
}

StreamContext::~StreamContext() {
  int previous = -1;
  (void)cudaGetDevice(&previous);
  (void)cudaSetDevice(device_);
  for (cudaEvent_t e : free_events_) (void)cudaEventDestroy(e);
  if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  if (previous >= 0) (void)cudaSetDevice(previous);
}

cudaEvent_t StreamContext::take_event() {
  {
    std::lock_guard lock(mutex_);
    if (!free_events_.empty()) {
      cudaEvent_t e = free_events_.back();
      free_events_.pop_back();
      return e;
    }
  }
  cudaEvent_t e = nullptr;
  check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
             "cudaEventCreateWithFlags on GPU " + std::to_string(device_));
  return e;
}

void StreamContext::give_back(cudaEvent_t event) {
  std::lock_guard lock(mutex_);
  free_events_.push_back(event);
}

void AbortSignal::raise(const std::string& why) {
  std::lock_guard lock(mutex);
  if (!raised.load()) reason = why;
  raised = true;
}

std::string AbortSignal::why() {
  std::lock_guard lock(mutex);
  return reason;
}

CommContext::CommContext(ncclComm_t comm, std::shared_ptr<StreamContext> stream, int rank, int size,
                         std::string name, std::chrono::nanoseconds timeout, std::shared_ptr<AbortSignal> signal)
    : comm_(comm),
      stream_(std::move(stream)),
      rank_(rank),
      size_(size),
      name_(std::move(name)),
      timeout_(timeout),
      signal_(std::move(signal)) {}

CommContext::~CommContext() {
  if (aborted_.load() || comm_ == nullptr) return;
  int previous = -1;
  (void)cudaGetDevice(&previous);
  (void)cudaSetDevice(device());
  // The communicator's destructor already waited for its stream; finalize flushes NCCL's own work.
  if (ncclCommFinalize(comm_) == ncclSuccess) {
    (void)ncclCommDestroy(comm_);
  } else {
    (void)ncclCommAbort(comm_);
  }
  if (previous >= 0) (void)cudaSetDevice(previous);
}

void CommContext::throw_if_aborted(const std::string& what) const {
  if (!aborted_.load()) return;
  std::lock_guard lock(mutex_);
  throw AbortedError(what + ": communicator '" + name_ + "' was aborted (" + abort_reason_ + ")");
}

void CommContext::check_health(const std::string& what) {
  throw_if_aborted(what);
  if (signal_ && signal_->raised.load()) {
    const std::string why = signal_->why();
    abort("another rank failed: " + why);
    throw AbortedError(what + " on comm '" + name_ + "' rank " + std::to_string(rank_) +
                       ": aborted because another rank failed: " + why);
  }
  ncclResult_t async = ncclSuccess;
  ncclResult_t queried = ncclCommGetAsyncError(comm_, &async);
  if (queried != ncclSuccess) async = queried;
  if (async != ncclSuccess && async != ncclInProgress) {
    const std::string message = what + " on comm '" + name_ + "' rank " + std::to_string(rank_) +
                                ": NCCL reported an asynchronous error: " + ncclGetErrorString(async) + " (" +
                                ncclGetLastError(comm_) + ")";
    abort(message);
    throw BackendError(message);
  }
}

void CommContext::abort(const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (aborted_.load()) return;
  abort_reason_ = reason;
  aborted_ = true;
  if (comm_ != nullptr) (void)ncclCommAbort(comm_);
}

}  // namespace twinccl::nccl
