// CUDA graphs of one NCCL communicator's calls (twinccl/call_graphs.h on NCCL).
//
//   GraphCapture graph(ctx);
//   graph.begin(where);                   // cudaStreamBeginCapture(stream, thread-local mode)
//   ... NCCL calls on the communicator's stream: captured, not run ...
//   graph.end(where);                     // cudaStreamEndCapture, cudaGraphInstantiateWithFlags
//   Work w = graph.launch(caller, where); // cudaGraphLaunch on the stream, then a CUDA event
//   w.wait(); graph.drop();               // cudaGraphExecDestroy, cudaGraphDestroy
//
// The order is nccl-tests 2.19's (src/common.cu, BenchTime with -G): capture begins after the
// untimed call and the barrier, the -n iterations are issued into it, the capture ends and is
// instantiated, and the graph is launched N times; the stream is waited for after the last launch.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "nccl/context.h"
#include "twinccl/communicator.h"

namespace twinccl::nccl {

class GraphCapture {
 public:
  explicit GraphCapture(std::shared_ptr<CommContext> ctx) : ctx_(std::move(ctx)) {}
  ~GraphCapture();  // ends an open capture and frees the graph
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;

  void begin(Where where);
  void end(Where where);
  // `caller`: the stream the launch is ordered after (ordering.h), as every NCCL launch.
  Work launch(cudaStream_t caller, Where where);
  void drop() noexcept;
  // A capture left open (an exception inside it): end it and keep nothing, so the stream can be
  // drained (a capturing stream cannot be queried).
  void end_capture_quietly() noexcept;

 private:
  std::shared_ptr<CommContext> ctx_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::uint64_t launches_ = 0;
};

}  // namespace twinccl::nccl
