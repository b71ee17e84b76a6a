// Launch order and per-thread groups (see ordering.h).
#include "nccl/ordering.h"

#include "nccl/check.h"
#include "nccl/context.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {
namespace {

thread_local ThreadGroup t_group;
thread_local cudaStream_t t_last_stream = nullptr;
thread_local bool t_has_last = false;

// Records an event on `from` and makes `to` wait for it (the event returns to the pool at once:
// cudaStreamWaitEvent captures the event's state when it is called).
void wait_for(StreamContext& to, cudaStream_t from, const std::function<std::string()>& what) {
  cudaEvent_t e = to.take_event();
  const cudaError_t recorded = api().cudaEventRecord(e, from);
  const cudaError_t waited =
      recorded == cudaSuccess ? api().cudaStreamWaitEvent(to.stream(), e, 0) : recorded;
  to.give_back(e);
  if (waited != cudaSuccess) {
    throw_cuda_error(waited,
                     what() + ": ordering the communicator's stream after the caller's stream");
  }
}

}  // namespace

ThreadGroup& thread_group() { return t_group; }

void refuse_if_group_of_other(const void* comm, const std::string& what) {
  if (t_group.depth == 0 || t_group.owner == comm) return;
  throw InvalidArgument(
      what + ": this thread has a group open on comm '" + t_group.owner_name +
      "' (group_start at " + std::string(t_group.where.file_name()) + ":" +
      std::to_string(t_group.where.line()) +
      "); NCCL groups belong to a thread, so end that group first (group_end) before using "
      "another communicator");
}

void order_launch(StreamContext& stream, cudaStream_t caller,
                  const std::function<std::string()>& what) {
  if (caller != stream.stream()) wait_for(stream, caller, what);
  if (t_has_last && t_last_stream != stream.stream()) wait_for(stream, t_last_stream, what);
  t_last_stream = stream.stream();
  t_has_last = true;
}

void forget_stream(cudaStream_t stream) {
  if (t_has_last && t_last_stream == stream) t_has_last = false;
}

}  // namespace twinccl::nccl
