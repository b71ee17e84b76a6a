// Stream: runs one rank's operations on one communicator in issue order, on a worker thread,
// so asynchronous calls really overlap with the caller's work. A blocking call issued while the
// stream is idle runs inline on the caller's thread (no hand-off), keeping latency low.
//
//   Stream s;
//   s.enqueue([]{ ... }, work);    // async
//   s.run_or_enqueue([]{ ... }, work); Work(work).wait();   // sync
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "work_state.h"

namespace twinccl::emu {

class Stream {
 public:
  using Task = std::function<void()>;
  Stream() = default;
  ~Stream();  // drains the queue, then joins the worker
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Called before the worker thread is created (it may throw, as std::thread would when the
  // system refuses a thread): the test seam for thread-creation failures.
  void before_thread_start(std::function<void()> hook) { before_thread_start_ = std::move(hook); }
  // Called when a worker that before_thread_start let start ends (or could not be created).
  void after_thread_end(std::function<void()> hook) { after_thread_end_ = std::move(hook); }
  // The worker ends once nothing was queued for `idle` (started again by the next enqueue): for
  // streams that are many and mostly idle (p2p_per_peer_streams lanes). Before any enqueue.
  void end_worker_when_idle(std::chrono::milliseconds idle) { idle_ = idle; }

  // Queues `task` on the worker; `work` completes with its outcome. When the worker cannot be
  // started, `work` completes with ResourceError and that error is thrown (nothing stays queued).
  void enqueue(Task task, std::shared_ptr<EmuWork> work);
  // Runs `task` now on this thread when nothing is queued or running, else queues it.
  void run_or_enqueue(Task task, std::shared_ptr<EmuWork> work);
  // run_or_enqueue's inline half, for callers that run the task themselves: true when nothing is
  // queued or running (the stream is then busy until end_inline()), else false.
  bool try_begin_inline();
  void end_inline();
  // Waits until everything queued so far ran.
  void drain();
  // True while a task runs inline on the caller's thread (read by that task, for the checker).
  bool running_inline() const { return inline_.load(std::memory_order_relaxed); }

 private:
  void worker_loop();
  // Under mu_: starts the worker if needed; on failure drops the last queued task, completes its
  // Work with ResourceError and returns that error (the caller throws it once unlocked).
  std::exception_ptr start_worker_locked();
  std::function<void()> before_thread_start_;
  std::function<void()> after_thread_end_;
  std::chrono::milliseconds idle_{0};  // 0: the worker lives as long as the stream
  bool running_ = false;               // a worker thread runs worker_loop
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<Task, std::shared_ptr<EmuWork>>> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::atomic<bool> inline_{false};
  std::thread worker_;
};

}  // namespace twinccl::emu
