// The recording NCCL + CUDA runtime test double (libtwinccl_nccl_double.so): internals.
//
// It checks the MAPPING of TwinCCL's calls onto NCCL and CUDA, not NCCL: host memory stands in
// for device memory, each CUDA stream is a host thread running its queue in order (so the host
// returns at once, as with a GPU), events are (stream, position) pairs, and a collective is a
// rendezvous of the ranks' stream threads; the last to arrive moves the data for all. What NCCL
// or CUDA would refuse, or what would be silently wrong on a GPU, is recorded as a violation.
// Tests read the call log and the violations through control.h.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#define DOUBLE_EXPORT extern "C" __attribute__((visibility("default")))

namespace dbl {

using Clock = std::chrono::steady_clock;
// The double's own bound on a host-side wait (blocking init/split): a test never hangs on it.
constexpr auto kHostWait = std::chrono::seconds(20);

// ---- registry.cc: settings, call log, violations, allocations
long setting(const std::string& key, long fallback);  // TWINCCL_DOUBLE_<KEY> or control API
// TWINCCL_DOUBLE_FAST=1 (read once): for bench/bench_nccl_overhead at ONE rank per process. Stream
// operations run inside the call that queues them (no stream thread), collective calls build no
// message and log nothing, and settings read from the environment are cached per thread; so what
// the double costs per call is small next to the backend's own host work. Not for tests.
bool fast_mode();
void log_line(const std::string& line);
void violation(const std::string& text);
std::string thread_tag();  // "rank R" once the thread created a communicator, else "thread #N"
void set_thread_rank(int rank);

struct Allocation {
  char* base = nullptr;
  std::size_t bytes = 0;
  std::atomic<int> in_use{0};  // queued stream operations still reading/writing it
  bool freed = false;
};
// The allocation holding [p, p + bytes), or null (also logs a violation naming `what`).
Allocation* find_allocation(const void* p, std::size_t bytes, const std::string& what);
Allocation* new_allocation(std::size_t bytes);
cudaError_t free_allocation(void* p);
// NCCL's rule for several ranks on one GPU (setting allocate_before_collectives=1): a cudaMalloc
// by a rank (thread) after it launched a collective, a mid-run allocation, is a violation. (Its
// paired cudaFree goes unflagged: frees at the end, after every rank's last collective, are safe.)
void note_collective_launched();
void check_allocation_allowed(std::size_t bytes);

// ---- cuda.cc: streams and events
class Stream {
 public:
  explicit Stream(int device);
  ~Stream();
  // Queues `op`; returns its position (1-based). `uses`: allocations held until it ran.
  std::uint64_t enqueue(std::function<void()> op, std::vector<Allocation*> uses = {});
  std::uint64_t enqueued() const { return enqueued_.load(); }
  std::uint64_t completed() const { return completed_.load(); }
  bool stopping() const { return stopping_.load(); }
  int device() const { return device_; }
  int id() const { return id_; }
  // Ordering knowledge for the checks: this stream waited for `other` up to `position`.
  void note_waited(const Stream* other, std::uint64_t position);
  std::uint64_t waited_for(const Stream* other) const;
  // CUDA graph capture (graphs.cc): between cudaStreamBeginCapture and cudaStreamEndCapture an
  // NCCL launch on this stream is kept (capture) instead of queued; cudaGraphLaunch replays the
  // kept launches onto a stream (`replay(stream)`: fresh collective numbers, then queued).
  using Replay = std::function<void(Stream*)>;
  bool capturing() const { return capturing_.load(); }
  void begin_capture(std::thread::id owner);
  std::vector<Replay> end_capture();
  void capture(Replay replay);
  std::thread::id capture_owner() const { return capture_owner_; }

 private:
  void run();
  int device_;
  int id_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::atomic<std::uint64_t> enqueued_{0};
  std::atomic<std::uint64_t> completed_{0};
  std::atomic<bool> stopping_{false};
  mutable std::mutex waited_mutex_;
  std::map<const Stream*, std::uint64_t> waited_;
  std::atomic<bool> capturing_{false};
  std::thread::id capture_owner_;
  std::vector<Replay> captured_;
  std::thread worker_;
};

Stream* stream_of(cudaStream_t s);  // the legacy default stream (0) maps to one per device
int current_device();
// Work the calling thread queued that an NCCL launch must be ordered after ("user kernels" and
// this thread's previous NCCL launch on another stream).
struct Dependency {
  const Stream* stream;
  std::uint64_t position;
  std::string what;
};
void note_user_work(const Stream* s, std::uint64_t position, const std::string& what);
void note_nccl_launch(const Stream* s, std::uint64_t position);
// A stream destroyed once its work all ran: this thread's later launches need no order after it.
void forget_dependencies_on(const Stream* s);
// Checks that `s` is ordered after every dependency of the calling thread; logs violations.
void check_launch_order(const Stream* s, const std::string& what);
// Streams with NCCL work deferred in this thread's open group (cudaEventRecord there is a bug).
bool deferred_in_open_group(const Stream* s);
// Captures the calling thread began and has not ended (graphs.cc): cudaMalloc/cudaFree are then
// refused, as CUDA's thread-local capture mode does for "potentially unsafe" calls.
int open_captures_of_this_thread();
// Sleeps a little, or returns false once `deadline` passed.
bool pause_until(Clock::time_point deadline);

}  // namespace dbl
