// CUDA graphs of NCCL calls (see graph.h).
//
// How it works: begin() starts capturing the communicator's stream in thread-local mode (what
// nccl-tests uses: another thread may capture or instantiate at the same time, and NCCL may
// allocate during a first connection) and marks the stream as captured (StreamContext): launches
// inside are then in stream order only and record no completion event (ordering.cc, work.cc),
// because a capture may neither wait for work outside it nor be queried. end() ends the capture and
// instantiates it; launch() is an ordinary launch: ordered after the caller's stream and this
// thread's previous NCCL launch, then a completion event the returned Work polls.
#include "nccl/graph.h"

#include "nccl/check.h"
#include "nccl/ordering.h"
#include "nccl/work.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {

GraphCapture::~GraphCapture() {
  end_capture_quietly();
  drop();
}

void GraphCapture::begin(Where where) {
  const std::string what = call_site_text("begin_capture", ctx_->name(), ctx_->rank(), where);
  ctx_->throw_if_aborted(what);
  if (ctx_->stream()->capturing())
    throw InvalidArgument(what + ": a capture is already open (call end_capture first)");
  drop();
  DeviceGuard guard(ctx_->device());
  check_cuda(api().cudaStreamBeginCapture(ctx_->cuda_stream(), cudaStreamCaptureModeThreadLocal),
             what + ": cudaStreamBeginCapture");
  ctx_->stream()->set_capturing(true);
}

void GraphCapture::end(Where where) {
  const std::string what = call_site_text("end_capture", ctx_->name(), ctx_->rank(), where);
  if (!ctx_->stream()->capturing())
    throw InvalidArgument(what + ": no capture is open (call begin_capture first)");
  ctx_->stream()->set_capturing(false);
  DeviceGuard guard(ctx_->device());
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = api().cudaStreamEndCapture(ctx_->cuda_stream(), &graph);
  if (ended != cudaSuccess) {
    if (graph != nullptr) (void)api().cudaGraphDestroy(graph);
    throw_cuda_error(ended, what +
                                ": cudaStreamEndCapture (a call inside the capture did "
                                "something CUDA refuses while capturing)");
  }
  graph_ = graph;
  check_cuda(api().cudaGraphInstantiateWithFlags(&exec_, graph_, 0),
             what + ": cudaGraphInstantiateWithFlags");
}

Work GraphCapture::launch(cudaStream_t caller, Where where) {
  auto completion = std::make_shared<Completion>(ctx_, "graph launch", ++launches_, where);
  if (exec_ == nullptr) {
    throw InvalidArgument(completion->describe() +
                          ": no graph (call begin_capture, the calls, then end_capture)");
  }
  if (ctx_->aborted()) ctx_->throw_if_aborted(completion->describe());
  DeviceGuard guard(ctx_->device());
  order_launch(*ctx_->stream(), caller, [&] { return completion->describe(); });
  if (const cudaError_t rc = api().cudaGraphLaunch(exec_, ctx_->cuda_stream()); rc != cudaSuccess)
    throw_cuda_error(rc, completion->describe() + ": cudaGraphLaunch");
  completion->record();
  return Work(std::make_shared<NcclWork>(ctx_, std::move(completion)));
}

void GraphCapture::drop() noexcept {
  if (exec_ != nullptr) (void)api().cudaGraphExecDestroy(exec_);
  if (graph_ != nullptr) (void)api().cudaGraphDestroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
}

void GraphCapture::end_capture_quietly() noexcept {
  if (!ctx_->stream()->capturing()) return;
  ctx_->stream()->set_capturing(false);
  cudaGraph_t graph = nullptr;
  if (api().cudaStreamEndCapture(ctx_->cuda_stream(), &graph) == cudaSuccess && graph != nullptr)
    (void)api().cudaGraphDestroy(graph);
}

}  // namespace twinccl::nccl
