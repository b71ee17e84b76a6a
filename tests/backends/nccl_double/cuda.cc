// The CUDA runtime entry points TwinCCL's NCCL backend uses, on host threads (see double.h).
//
// How it works: a Stream is a worker thread running its queue in order; enqueued()/completed()
// count operations. An event is the (stream, position) of its last record: complete once the
// stream completed that many. cudaStreamWaitEvent queues a wait for that position and remembers
// it, which is what the ordering checks of NCCL launches read (check_launch_order).
#include <cstring>

#include "nccl_double/double.h"

namespace dbl {
namespace {

struct Event {
  const Stream* stream = nullptr;
  std::uint64_t position = 0;
  bool captured = false;  // recorded inside a stream capture: a graph node, not a queue position
};

thread_local int t_device = 0;
thread_local std::vector<Dependency> t_dependencies;
std::atomic<int> g_next_stream{1};

Stream* legacy_stream(int device) {
  static std::mutex mutex;
  static std::map<int, Stream*> streams;  // never destroyed
  std::lock_guard lock(mutex);
  Stream*& s = streams[device];
  if (s == nullptr) s = new Stream(device);
  return s;
}

}  // namespace

Stream::Stream(int device) : device_(device), id_(g_next_stream++), worker_([this] { run(); }) {}

Stream::~Stream() {
  stopping_ = true;
  cv_.notify_all();
  worker_.join();
}

std::uint64_t Stream::enqueue(std::function<void()> op, std::vector<Allocation*> uses) {
  if (capturing_.load()) {
    violation(thread_tag() + ": work other than an NCCL launch queued on stream " +
              std::to_string(id_) +
              " while it is captured into a CUDA graph (the double models NCCL launches only; "
              "it runs now, not at the graph's launch)");
  }
  if (fast_mode()) {  // one rank per process: the operation runs here, in queue order
    op();
    ++enqueued_;
    return ++completed_;
  }
  for (Allocation* a : uses) {
    if (a != nullptr) ++a->in_use;
  }
  std::lock_guard lock(mutex_);
  queue_.push_back([op = std::move(op), uses = std::move(uses)] {
    op();
    for (Allocation* a : uses) {
      if (a != nullptr) --a->in_use;
    }
  });
  cv_.notify_all();
  return ++enqueued_;
}

void Stream::run() {
  for (;;) {
    std::function<void()> op;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return stopping_.load() || !queue_.empty(); });
      if (queue_.empty()) return;
      op = std::move(queue_.front());
      queue_.pop_front();
    }
    op();
    ++completed_;
  }
}

void Stream::note_waited(const Stream* other, std::uint64_t position) {
  std::lock_guard lock(waited_mutex_);
  auto& p = waited_[other];
  p = std::max(p, position);
}

std::uint64_t Stream::waited_for(const Stream* other) const {
  std::lock_guard lock(waited_mutex_);
  auto it = waited_.find(other);
  return it == waited_.end() ? 0 : it->second;
}

Stream* stream_of(cudaStream_t s) {
  if (s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread)
    return legacy_stream(t_device);
  return reinterpret_cast<Stream*>(s);
}

int current_device() { return t_device; }

void note_user_work(const Stream* s, std::uint64_t position, const std::string& what) {
  t_dependencies.push_back({s, position, what});
}

void note_nccl_launch(const Stream* s, std::uint64_t position) {
  std::erase_if(t_dependencies, [](const Dependency& d) { return d.what.rfind("NCCL", 0) == 0; });
  t_dependencies.push_back(
      {s, position,
       "NCCL launch #" + std::to_string(position) + " on stream " + std::to_string(s->id())});
}

void forget_dependencies_on(const Stream* s) {
  std::erase_if(t_dependencies, [&](const Dependency& d) { return d.stream == s; });
}

void check_launch_order(const Stream* s, const std::string& what) {
  for (const Dependency& d : t_dependencies) {
    if (d.stream == s || s->waited_for(d.stream) >= d.position) continue;
    violation(thread_tag() + ": " + what + " on stream " + std::to_string(s->id()) +
              " is not ordered after " + d.what +
              " (record an event there and cudaStreamWaitEvent before launching)");
  }
}

bool pause_until(Clock::time_point deadline) {
  if (Clock::now() >= deadline) return false;
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  return true;
}

}  // namespace dbl

using dbl::stream_of;

DOUBLE_EXPORT cudaError_t cudaGetDeviceCount(int* count) {
  if (const long e = dbl::setting("device_count_error", 0); e != 0)
    return static_cast<cudaError_t>(e);
  *count = static_cast<int>(dbl::setting("device_count", 8));
  return *count == 0 ? cudaErrorNoDevice : cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaGetDevice(int* device) {
  *device = dbl::t_device;
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= dbl::setting("device_count", 8)) return cudaErrorInvalidDevice;
  dbl::t_device = device;
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int /*device*/) {
  if (attr == cudaDevAttrComputeCapabilityMajor)
    *value = static_cast<int>(dbl::setting("sm_major", 9));
  else if (attr == cudaDevAttrComputeCapabilityMinor)
    *value = 0;
  else
    *value = 0;
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaGetLastError() { return cudaSuccess; }
DOUBLE_EXPORT const char* cudaGetErrorName(cudaError_t e) {
  return e == cudaSuccess         ? "cudaSuccess"
         : e == cudaErrorNotReady ? "cudaErrorNotReady"
                                  : "cudaError(double)";
}
DOUBLE_EXPORT const char* cudaGetErrorString(cudaError_t) { return "(recording test double)"; }
DOUBLE_EXPORT cudaError_t cudaRuntimeGetVersion(int* v) {
  *v = static_cast<int>(dbl::setting("runtime_version", 13000));
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaDriverGetVersion(int* v) {
  *v = static_cast<int>(dbl::setting("driver_version", 13000));
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) {
  *s = reinterpret_cast<cudaStream_t>(new dbl::Stream(dbl::t_device));
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaStreamDestroy(cudaStream_t s) {
  dbl::Stream* stream = stream_of(s);
  if (stream->completed() != stream->enqueued()) {
    dbl::violation(dbl::thread_tag() + ": cudaStreamDestroy of stream " +
                   std::to_string(stream->id()) + " with work still queued");
    return cudaSuccess;  // leaked: its work may still run
  }
  // Its work all ran: a later launch of this thread is ordered after it (a split's or a
  // subcommunicator's child, drained and destroyed before the parent launches again).
  dbl::forget_dependencies_on(stream);
  delete stream;
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaStreamQuery(cudaStream_t s) {
  dbl::Stream* stream = stream_of(s);
  if (stream->capturing()) {
    dbl::violation(dbl::thread_tag() + ": cudaStreamQuery of stream " +
                   std::to_string(stream->id()) +
                   " while it is captured (CUDA: cudaErrorStreamCaptureUnsupported, and the "
                   "capture is invalidated)");
    return cudaErrorStreamCaptureUnsupported;
  }
  return stream->completed() == stream->enqueued() ? cudaSuccess : cudaErrorNotReady;
}
DOUBLE_EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) {
  *e = reinterpret_cast<cudaEvent_t>(new dbl::Event);
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaEventDestroy(cudaEvent_t e) {
  delete reinterpret_cast<dbl::Event*>(e);
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  dbl::Stream* stream = stream_of(s);
  if (dbl::deferred_in_open_group(stream)) {
    dbl::violation(
        dbl::thread_tag() + ": cudaEventRecord on stream " + std::to_string(stream->id()) +
        " while NCCL work for it is deferred in this thread's open group: the event completes "
        "before that work is even queued");
  }
  auto* event = reinterpret_cast<dbl::Event*>(e);
  event->stream = stream;
  event->position = stream->enqueued();
  event->captured = stream->capturing();
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaEventQuery(cudaEvent_t e) {
  auto* event = reinterpret_cast<dbl::Event*>(e);
  if (event->stream == nullptr) return cudaSuccess;
  if (event->captured) {
    dbl::violation(dbl::thread_tag() +
                   ": cudaEventQuery of an event recorded inside a stream "
                   "capture (CUDA: cudaErrorCapturedEvent)");
    return cudaErrorCapturedEvent;
  }
  return event->stream->completed() >= event->position ? cudaSuccess : cudaErrorNotReady;
}
DOUBLE_EXPORT cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
  *ms = 0;
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
  dbl::Stream* stream = stream_of(s);
  const dbl::Event event = *reinterpret_cast<dbl::Event*>(e);
  if (stream->capturing() && !event.captured) {
    dbl::violation(dbl::thread_tag() + ": cudaStreamWaitEvent makes stream " +
                   std::to_string(stream->id()) +
                   ", which is being captured, wait for an event recorded outside the capture "
                   "(CUDA: cudaErrorStreamCaptureIsolation)");
    return cudaErrorStreamCaptureIsolation;
  }
  if (event.stream == nullptr || event.stream == stream) return cudaSuccess;
  stream->note_waited(event.stream, event.position);
  stream->enqueue([event, stream] {
    while (event.stream->completed() < event.position && !stream->stopping()) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  return cudaSuccess;
}
namespace {
bool refused_while_capturing(const char* fn) {
  if (dbl::open_captures_of_this_thread() == 0) return false;
  dbl::violation(dbl::thread_tag() + ": " + fn +
                 " while this thread captures a stream in thread-local mode (CUDA refuses "
                 "potentially unsafe calls then: cudaErrorStreamCaptureUnsupported)");
  return true;
}
}  // namespace

DOUBLE_EXPORT cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  if (refused_while_capturing("cudaMalloc")) return cudaErrorStreamCaptureUnsupported;
  dbl::check_allocation_allowed(bytes);
  *p = dbl::new_allocation(bytes)->base;
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaFree(void* p) {
  if (refused_while_capturing("cudaFree")) return cudaErrorStreamCaptureUnsupported;
  return dbl::free_allocation(p);
}
DOUBLE_EXPORT cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t s) {
  dbl::Allocation* a = dbl::find_allocation(p, bytes, dbl::thread_tag() + ": cudaMemsetAsync");
  if (a == nullptr) return cudaErrorInvalidValue;
  stream_of(s)->enqueue([p, value, bytes] { std::memset(p, value, bytes); }, {a});
  return cudaSuccess;
}
DOUBLE_EXPORT cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes,
                                          cudaMemcpyKind kind, cudaStream_t s) {
  std::vector<dbl::Allocation*> uses;
  const std::string what = dbl::thread_tag() + ": cudaMemcpyAsync";
  if (kind != cudaMemcpyDeviceToHost)
    uses.push_back(dbl::find_allocation(dst, bytes, what + " destination"));
  if (kind != cudaMemcpyHostToDevice)
    uses.push_back(dbl::find_allocation(src, bytes, what + " source"));
  for (auto* a : uses) {
    if (a == nullptr) return cudaErrorInvalidValue;
  }
  dbl::Stream* stream = stream_of(s);
  if ((kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost) &&
      stream->completed() != stream->enqueued()) {
    // CUDA "API synchronization behavior": with pageable host memory the copy may first
    // synchronize with the stream: an unbounded host wait behind the work still queued there.
    dbl::violation(
        what + " with host memory on stream " + std::to_string(stream->id()) + " while " +
        std::to_string(stream->enqueued() - stream->completed()) +
        " operation(s) are still queued there (a pageable copy may block the host until they end; "
        "drain the stream first, bounded)");
  }
  stream->enqueue([dst, src, bytes] { std::memmove(dst, src, bytes); }, std::move(uses));
  return cudaSuccess;
}
