// CUDA graphs in the test double: stream capture, instantiation and launch (see double.h).
//
// How it works: cudaStreamBeginCapture marks the stream; an NCCL launch on a marked stream is kept
// as a replay function instead of being queued (nccl_comm.cc). cudaStreamEndCapture hands the kept
// launches to a Graph, cudaGraphInstantiateWithFlags copies them into an executable graph, and
// each cudaGraphLaunch replays them onto the launch stream, in capture order, with fresh collective
// numbers (every rank launches the same graph, so the ranks' numbers still agree). Every call logs
// one line, so a test reads the sequence (begin, calls, end, instantiate, launches, the wait).
// What CUDA refuses around a capture (querying the stream, waiting for an event from outside it,
// cudaMalloc in the capturing thread, ending from another thread) is a violation.
#include <algorithm>

#include "nccl_double/double.h"

namespace dbl {
namespace {

struct Graph {
  std::vector<Stream::Replay> launches;
  bool destroyed = false;
};
struct GraphExec {
  std::vector<Stream::Replay> launches;
  bool destroyed = false;
};

thread_local int t_open_captures = 0;

}  // namespace

int open_captures_of_this_thread() { return t_open_captures; }

void Stream::begin_capture(std::thread::id owner) {
  capture_owner_ = owner;
  captured_.clear();
  capturing_ = true;
}

std::vector<Stream::Replay> Stream::end_capture() {
  capturing_ = false;
  return std::exchange(captured_, {});
}

void Stream::capture(Replay replay) { captured_.push_back(std::move(replay)); }

}  // namespace dbl

using dbl::stream_of;

DOUBLE_EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode) {
  if (s == nullptr || s == cudaStreamLegacy) {
    dbl::violation(dbl::thread_tag() + ": cudaStreamBeginCapture of the legacy default stream");
    return cudaErrorStreamCaptureImplicit;
  }
  dbl::Stream* stream = stream_of(s);
  if (stream->capturing()) {
    dbl::violation(dbl::thread_tag() + ": cudaStreamBeginCapture of stream " +
                   std::to_string(stream->id()) + ", which is already being captured");
    return cudaErrorIllegalState;
  }
  const char* mode_name = mode == cudaStreamCaptureModeThreadLocal ? "thread_local"
                          : mode == cudaStreamCaptureModeGlobal    ? "global"
                                                                   : "relaxed";
  dbl::log_line(dbl::thread_tag() + " cudaStreamBeginCapture stream=" +
                std::to_string(stream->id()) + " mode=" + mode_name);
  stream->begin_capture(std::this_thread::get_id());
  if (mode != cudaStreamCaptureModeRelaxed) ++dbl::t_open_captures;
  return cudaSuccess;
}

DOUBLE_EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t* graph) {
  dbl::Stream* stream = stream_of(s);
  if (!stream->capturing()) {
    dbl::violation(dbl::thread_tag() + ": cudaStreamEndCapture of stream " +
                   std::to_string(stream->id()) + ", which is not being captured");
    return cudaErrorIllegalState;
  }
  if (stream->capture_owner() != std::this_thread::get_id()) {
    dbl::violation(dbl::thread_tag() +
                   ": cudaStreamEndCapture from another thread than the one "
                   "that began it (CUDA: cudaErrorStreamCaptureWrongThread)");
    return cudaErrorStreamCaptureWrongThread;
  }
  dbl::t_open_captures = std::max(dbl::t_open_captures - 1, 0);
  auto* g = new dbl::Graph{stream->end_capture(), false};
  dbl::log_line(dbl::thread_tag() + " cudaStreamEndCapture stream=" + std::to_string(stream->id()) +
                " launches=" + std::to_string(g->launches.size()));
  *graph = reinterpret_cast<cudaGraph_t>(g);
  return cudaSuccess;
}

DOUBLE_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* exec, cudaGraph_t graph,
                                                        unsigned long long flags) {
  auto* g = reinterpret_cast<dbl::Graph*>(graph);
  if (g == nullptr || g->destroyed) {
    dbl::violation(dbl::thread_tag() + ": cudaGraphInstantiateWithFlags of a destroyed graph");
    return cudaErrorInvalidValue;
  }
  dbl::log_line(dbl::thread_tag() + " cudaGraphInstantiate launches=" +
                std::to_string(g->launches.size()) + " flags=" + std::to_string(flags));
  *exec = reinterpret_cast<cudaGraphExec_t>(new dbl::GraphExec{g->launches, false});
  return cudaSuccess;
}

DOUBLE_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t s) {
  auto* e = reinterpret_cast<dbl::GraphExec*>(exec);
  if (e == nullptr || e->destroyed) {
    dbl::violation(dbl::thread_tag() + ": cudaGraphLaunch of a destroyed executable graph");
    return cudaErrorInvalidValue;
  }
  dbl::Stream* stream = stream_of(s);
  dbl::log_line(dbl::thread_tag() + " cudaGraphLaunch stream=" + std::to_string(stream->id()) +
                " launches=" + std::to_string(e->launches.size()));
  if (!e->launches.empty()) dbl::check_launch_order(stream, "cudaGraphLaunch (NCCL kernels)");
  for (const auto& replay : e->launches) replay(stream);
  return cudaSuccess;
}

DOUBLE_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  auto* e = reinterpret_cast<dbl::GraphExec*>(exec);
  if (e == nullptr || e->destroyed) {
    dbl::violation(dbl::thread_tag() + ": cudaGraphExecDestroy of a destroyed executable graph");
    return cudaErrorInvalidValue;
  }
  dbl::log_line(dbl::thread_tag() + " cudaGraphExecDestroy");
  e->destroyed = true;  // kept (never freed), so a later use is reported, not a crash
  e->launches.clear();
  return cudaSuccess;
}

DOUBLE_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  auto* g = reinterpret_cast<dbl::Graph*>(graph);
  if (g == nullptr || g->destroyed) {
    dbl::violation(dbl::thread_tag() + ": cudaGraphDestroy of a destroyed graph");
    return cudaErrorInvalidValue;
  }
  dbl::log_line(dbl::thread_tag() + " cudaGraphDestroy");
  g->destroyed = true;
  g->launches.clear();
  return cudaSuccess;
}
