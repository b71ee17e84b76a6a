// Order of NCCL work on the GPU: after the caller's own work, and in one launch order per rank
// thread across communicators. (NCCL's rule that groups belong to a thread is kept for every
// backend by the Communicator base class: core/src/thread_group.h.)
//
//   order_launch(ctx.stream(), caller_stream);    // just before the NCCL call(s) that launch
//
// How it works:
// * Caller's stream (issue 15 item 2, as torch's ProcessGroupNCCL): an event is recorded on the
//   caller's stream (default: CUDA's legacy default stream) and the communicator's stream waits
//   for it, so a kernel that wrote x before all_reduce(x) finishes first.
// * One launch order (item 5): every rank thread remembers the stream of its last NCCL launch.
//   When it launches on another communicator's stream, that stream first waits for an event
//   recorded on the previous one. All NCCL kernels of a rank thread thus run on the GPU in the
//   order the thread issued them, which is the same on every rank when every rank issues the same
//   program order: no cross-communicator deadlock. This is done here for every NCCL version;
//   NCCL_LAUNCH_ORDER_IMPLICIT (NCCL >= 2.26) is neither needed nor set (a user may still set it).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>

namespace twinccl::nccl {

class StreamContext;

// Makes `stream` wait for `caller` (unless it is the same stream) and for this thread's previous
// NCCL launch on another stream; then remembers `stream` as this thread's last launch. Does
// nothing while `stream` is captured into a CUDA graph (the graph's launch is ordered instead).
// `what` names the call in an error message; it is called only when CUDA fails.
void order_launch(StreamContext& stream, cudaStream_t caller,
                  const std::function<std::string()>& what);
// A stream is being destroyed: stop remembering it as this thread's last launch.
void forget_stream(cudaStream_t stream);

}  // namespace twinccl::nccl
