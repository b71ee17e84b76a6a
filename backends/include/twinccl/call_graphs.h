// Calls captured once and launched many times: CUDA graphs, on the backends that have them (NCCL).
//
//   if (twinccl::CallGraphs* graphs = twinccl::call_graphs(comm)) {
//     graphs->begin_capture();
//     comm.all_reduce(x, x, ReduceOp::sum(), {.async_op = true});  // captured: runs at launch
//     graphs->end_capture();                                       // the graph, instantiated
//     Work last;
//     for (int i = 0; i < 10; ++i) last = graphs->launch_capture();
//     last.wait();
//     graphs->drop_capture();
//   }
//
// This is nccl-tests' -G (`twinccl perf --backend nccl -G N`): CUDA graphs take the host's launch
// cost out of the time. A captured call's own Work cannot be waited for (it has not run: wait for
// a launch's Work). The emulator has none: call_graphs answers nullptr there.
#pragma once

#include "twinccl/communicator.h"

namespace twinccl {

class CallGraphs {
 public:
  // Starts capturing this communicator's calls of the calling thread (NCCL: cudaStreamBeginCapture
  // of its stream in thread-local mode, as nccl-tests). A graph held from before is dropped.
  virtual void begin_capture(Where where = Where::current()) = 0;
  // Ends the capture and makes the graph launchable (cudaStreamEndCapture, cudaGraphInstantiate).
  virtual void end_capture(Where where = Where::current()) = 0;
  // Launches the graph once, after the caller's stream as any call is; the Work ends with it.
  virtual Work launch_capture(Where where = Where::current()) = 0;
  // Frees the graph (after the last launch's Work was waited for). Nothing held: does nothing.
  virtual void drop_capture() noexcept = 0;

 protected:
  ~CallGraphs() = default;
};

// The communicator's graphs, or nullptr where its backend has none (the emulator).
inline CallGraphs* call_graphs(Communicator& comm) { return dynamic_cast<CallGraphs*>(&comm); }

}  // namespace twinccl
