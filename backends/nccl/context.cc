// Device guard, stream + event pool, abort state (see context.h).
#include "nccl/context.h"

#include <thread>

#include "nccl/check.h"
#include "nccl/ordering.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {
namespace {

using Clock = std::chrono::steady_clock;

// Sleeps a growing pause (10 us .. 1 ms) between polls.
void pause(std::chrono::microseconds& step) {
  std::this_thread::sleep_for(step);
  step = std::min(step * 2, std::chrono::microseconds(1000));
}

}  // namespace

DeviceGuard::DeviceGuard(int device) : device_(device) {
  check_cuda(api().cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device_)
    check_cuda(api().cudaSetDevice(device_),
               "api().cudaSetDevice(" + std::to_string(device_) + ")");
}

DeviceGuard::~DeviceGuard() {
  if (previous_ != device_ && previous_ >= 0) (void)api().cudaSetDevice(previous_);
}

StreamContext::StreamContext(int device, std::chrono::nanoseconds timeout,
                             std::shared_ptr<AbortSignal> signal)
    : device_(device), timeout_(timeout), signal_(std::move(signal)) {
  DeviceGuard guard(device);
  check_cuda(api().cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
             "cudaStreamCreateWithFlags on GPU " + std::to_string(device));
}

StreamContext::~StreamContext() {
  forget_stream(stream_);  // the launch order of this thread must not record on it any more
  int previous = -1;
  (void)api().cudaGetDevice(&previous);
  (void)api().cudaSetDevice(device_);
  for (cudaEvent_t e : free_events_) (void)api().cudaEventDestroy(e);
  if (ordering_event_ != nullptr) (void)api().cudaEventDestroy(ordering_event_);
  if (stream_ != nullptr) (void)api().cudaStreamDestroy(stream_);
  if (previous >= 0) (void)api().cudaSetDevice(previous);
}

cudaEvent_t StreamContext::ordering_event() {
  if (ordering_event_ == nullptr) ordering_event_ = take_event();
  return ordering_event_;
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
  check_cuda(api().cudaEventCreateWithFlags(&e, cudaEventDisableTiming),
             "cudaEventCreateWithFlags on GPU " + std::to_string(device_));
  return e;
}

void StreamContext::give_back(cudaEvent_t event) {
  std::lock_guard lock(mutex_);
  free_events_.push_back(event);
}

void StreamContext::set_abort(std::function<void(const std::string&)> abort) {
  std::lock_guard lock(mutex_);
  abort_ = std::move(abort);
}

StreamContext::Drain StreamContext::drain(const std::string& what) {
  if (capturing_) {  // cudaStreamQuery would fail and invalidate the capture
    throw InvalidArgument(what +
                          ": the communicator's stream is being captured into a CUDA graph "
                          "(begin_capture): call end_capture before waiting for the stream");
  }
  const auto deadline = Clock::now() + timeout_;
  auto step = std::chrono::microseconds(10);
  for (;;) {
    const cudaError_t rc = api().cudaStreamQuery(stream_);
    if (rc == cudaSuccess) return aborted_.load() ? Drain::aborted : Drain::idle;
    if (rc != cudaErrorNotReady) throw_cuda_error(rc, what);
    if (!aborted_.load() && signal_ && signal_->raised.load()) fail_fast(signal_->why());
    if (Clock::now() >= deadline) return Drain::timed_out;
    pause(step);
  }
}

void StreamContext::fail_fast(const std::string& why) {
  if (signal_) signal_->raise(why);
  std::function<void(const std::string&)> abort;
  {
    std::lock_guard lock(mutex_);
    abort = abort_;
  }
  aborted_ = true;
  if (abort) abort(why);
}

int StreamContext::sm_major() {
  std::lock_guard lock(mutex_);
  if (sm_major_ < 0) {
    check_cuda(api().cudaDeviceGetAttribute(&sm_major_, cudaDevAttrComputeCapabilityMajor, device_),
               "cudaDeviceGetAttribute(compute capability) on GPU " + std::to_string(device_));
  }
  return sm_major_;
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
                         std::string name, std::chrono::nanoseconds timeout,
                         std::shared_ptr<AbortSignal> signal)
    : comm_(comm),
      stream_(std::move(stream)),
      rank_(rank),
      size_(size),
      name_(std::move(name)),
      timeout_(timeout),
      signal_(std::move(signal)) {}

void CommContext::set_comm(ncclComm_t comm, int rank, int size) {
  std::lock_guard lock(mutex_);
  comm_ = comm;
  rank_ = rank;
  size_ = size;
}

CommContext::~CommContext() {
  if (aborted_.load() || comm_ == nullptr) return;
  int previous = -1;
  (void)api().cudaGetDevice(&previous);
  (void)api().cudaSetDevice(device());
  // Non-blocking finalize: NCCL flushes its own work while we poll with a deadline.
  const ncclResult_t rc = api().ncclCommFinalize(comm_);
  bool finalized = rc == ncclSuccess || rc == ncclInProgress;
  if (finalized) {
    try {
      wait_ready("ncclCommFinalize of comm '" + name_ + "'");
    } catch (const std::exception&) {
      finalized = false;  // wait_ready aborted the communicator
    }
  }
  if (finalized) {
    (void)api().ncclCommDestroy(comm_);
  } else if (!aborted_.load()) {
    (void)api().ncclCommAbort(comm_);
  }
  if (previous >= 0) (void)api().cudaSetDevice(previous);
}

void CommContext::wait_ready(const std::string& what) {
  const auto deadline = Clock::now() + timeout_;
  auto step = std::chrono::microseconds(10);
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t queried = api().ncclCommGetAsyncError(comm_, &state);
    if (queried != ncclSuccess) state = queried;
    if (state == ncclSuccess) return;
    const std::string where = call_site_text(what, name_, rank_);
    if (state != ncclInProgress) {
      const std::string message = where + ": NCCL error '" + api().ncclGetErrorString(state) +
                                  "' (" + api().ncclGetLastError(comm_) + ")";
      abort(message);
      if (state == ncclInvalidArgument || state == ncclInvalidUsage) throw InvalidArgument(message);
      throw BackendError(message);
    }
    if (signal_ && signal_->raised.load()) {
      const std::string why = signal_->why();
      abort("another rank failed: " + why);
      throw AbortedError(where + ": aborted because another rank failed: " + why);
    }
    if (Clock::now() >= deadline) {
      const std::string message = where + ": still ncclInProgress after " +
                                  std::to_string(std::chrono::duration<double>(timeout_).count()) +
                                  " s (TWINCCL_TIMEOUT_S); communicator aborted";
      abort(message);
      throw TimeoutError(message);
    }
    pause(step);
  }
}

bool CommContext::ready_now() const {
  ncclResult_t state = ncclInProgress;
  return api().ncclCommGetAsyncError(comm_, &state) == ncclSuccess && state == ncclSuccess;
}

bool CommContext::ready() const {
  if (aborted_.load() || comm_ == nullptr) return false;
  ncclResult_t state = ncclInProgress;
  return api().ncclCommGetAsyncError(comm_, &state) == ncclSuccess && state == ncclSuccess;
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
    throw AbortedError(call_site_text(what, name_, rank_) +
                       ": aborted because another rank failed: " + why);
  }
  ncclResult_t async = ncclSuccess;
  ncclResult_t queried = api().ncclCommGetAsyncError(comm_, &async);
  if (queried != ncclSuccess) async = queried;
  if (async != ncclSuccess && async != ncclInProgress) {
    const std::string message =
        call_site_text(what, name_, rank_) +
        ": NCCL reported an asynchronous error: " + api().ncclGetErrorString(async) + " (" +
        api().ncclGetLastError(comm_) + ")";
    abort(message);
    throw BackendError(message);
  }
}

void CommContext::abort(const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (aborted_.load()) return;
  abort_reason_ = reason;
  aborted_ = true;
  if (comm_ != nullptr) (void)api().ncclCommAbort(comm_);
}

}  // namespace twinccl::nccl
