// Launch order and per-thread groups (see ordering.h).
#include "nccl/ordering.h"

#include "nccl/check.h"
#include "nccl/context.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {
namespace {

thread_local cudaStream_t t_last_stream = nullptr;
thread_local bool t_has_last = false;

// Records the stream's ordering event on `from` and makes `to` wait for it (cudaStreamWaitEvent
// captures the event's state when it is called, so the same event serves the next launch).
void wait_for(StreamContext& to, cudaStream_t from, const std::function<std::string()>& what) {
  cudaEvent_t e = to.ordering_event();
  const cudaError_t recorded = api().cudaEventRecord(e, from);
  const cudaError_t waited =
      recorded == cudaSuccess ? api().cudaStreamWaitEvent(to.stream(), e, 0) : recorded;
  if (waited != cudaSuccess) {
    throw_cuda_error(waited,
                     what() + ": ordering the communicator's stream after the caller's stream");
  }
}

}  // namespace

void order_launch(StreamContext& stream, cudaStream_t caller,
                  const std::function<std::string()>& what) {
  if (stream.capturing()) return;  // inside the graph, stream order only (context.h)
  if (caller != stream.stream()) wait_for(stream, caller, what);
  if (t_has_last && t_last_stream != stream.stream()) wait_for(stream, t_last_stream, what);
  t_last_stream = stream.stream();
  t_has_last = true;
}

void forget_stream(cudaStream_t stream) {
  if (t_has_last && t_last_stream == stream) t_has_last = false;
}

}  // namespace twinccl::nccl
