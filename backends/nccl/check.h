// Turning NCCL and CUDA return codes into TwinCCL's typed errors, keeping their own messages.
//
//   check_nccl(ncclAllReduce(...), comm, [&] { return "all_reduce #3 on comm 'world'"; });
//   check_cuda(cudaMalloc(&p, bytes), "cudaMalloc of 4096 bytes on GPU 0");
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>
#include <string_view>

#include "nccl/loader.h"

namespace twinccl::nccl {

// Communicators are non-blocking, so ncclInProgress means "accepted, still being queued": it is
// not an error here, and the caller polls CommContext::wait_ready before relying on the work.
// Throws for anything else but ncclSuccess: InvalidArgument for
// ncclInvalidArgument/ncclInvalidUsage, BackendError otherwise. The message is "<what>:
// <ncclGetErrorString> (<ncclGetLastError>)".
[[noreturn]] void throw_nccl_error(ncclResult_t result, ncclComm_t comm, std::string_view what);

// Whether a check on this thread saw ncclInProgress since the last reset. NCCL's own enqueue asks
// ncclCommGetAsyncError of a non-blocking communicator before it returns, so a launch answered
// ncclSuccess is queued: the launch path polls (CommContext::wait_ready) only after ncclInProgress.
inline thread_local bool t_nccl_in_progress = false;

inline void check_nccl(ncclResult_t result, ncclComm_t comm, std::string_view what) {
  if (result == ncclInProgress) t_nccl_in_progress = true;
  if (result != ncclSuccess && result != ncclInProgress) throw_nccl_error(result, comm, what);
}

// The same for a message built only on failure (keeps the fast path free of string work).
template <class DescribeFn>
inline void check_nccl_lazy(ncclResult_t result, ncclComm_t comm, DescribeFn&& describe) {
  if (result == ncclInProgress) t_nccl_in_progress = true;
  if (result != ncclSuccess && result != ncclInProgress) throw_nccl_error(result, comm, describe());
}

// BackendError "<what>: <cudaGetErrorName>: <cudaGetErrorString>" for anything but cudaSuccess.
[[noreturn]] void throw_cuda_error(cudaError_t result, std::string_view what);

inline void check_cuda(cudaError_t result, std::string_view what) {
  if (result != cudaSuccess) throw_cuda_error(result, what);
}

// "NCCL 2.28.9" from an NCCL version code (either encoding).
std::string nccl_version_text(int code);

}  // namespace twinccl::nccl
