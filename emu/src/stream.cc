#include "stream.h"

#include <string>

#include "twinccl/errors.h"

namespace twinccl::emu {
namespace {

void run_task(const Stream::Task& task, EmuWork& work) {
  try {
    task();
    work.complete(nullptr);
  } catch (...) {
    work.complete(std::current_exception());
  }
}

}  // namespace

Stream::~Stream() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::exception_ptr Stream::start_worker_locked() {
  if (running_) return nullptr;
  if (worker_.joinable()) worker_.join();  // one that ended when idle (it holds no lock now)
  std::string why;
  std::exception_ptr error;
  bool started = false;
  try {
    if (before_thread_start_) before_thread_start_();
    started = true;
    running_ = true;
    worker_ = std::thread([this] { worker_loop(); });
    return nullptr;
  } catch (const Error&) {  // a typed refusal (a cap on threads: ConfigError) stays as it is
    error = std::current_exception();
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "a non-standard exception";
  }
  running_ = false;
  if (started && after_thread_end_) after_thread_end_();
  if (!error) {
    error = std::make_exception_ptr(ResourceError(
        "could not start the stream thread that runs this rank's operations: " + why +
        " (the process may have reached its thread limit: ulimit -u, cgroup pids.max, or its "
        "address-space limit, ulimit -v: each thread reserves its stack)"));
  }
  std::shared_ptr<EmuWork> work = std::move(queue_.back().second);
  queue_.pop_back();
  work->complete(error);
  return error;
}

void Stream::enqueue(Task task, std::shared_ptr<EmuWork> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.emplace_back(std::move(task), std::move(work));
    if (std::exception_ptr error = start_worker_locked()) std::rethrow_exception(error);
  }
  cv_.notify_all();
}

void Stream::run_or_enqueue(Task task, std::shared_ptr<EmuWork> work) {
  if (!try_begin_inline()) return enqueue(std::move(task), std::move(work));
  run_task(task, *work);
  end_inline();
}

bool Stream::try_begin_inline() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (busy_ || !queue_.empty()) return false;
    busy_ = true;
  }
  inline_.store(true, std::memory_order_relaxed);
  return true;
}

void Stream::end_inline() {
  inline_.store(false, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    busy_ = false;
  }
  cv_.notify_all();
}

void Stream::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void Stream::worker_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  auto ready = [&] { return !busy_ && (!queue_.empty() || stopping_); };
  for (;;) {
    if (idle_.count() == 0) {
      cv_.wait(lock, ready);
    } else if (!cv_.wait_for(lock, idle_, ready) && (busy_ || !queue_.empty())) {
      continue;  // a task runs inline on the caller's thread: not idle
    }
    if (queue_.empty()) {  // stopping and drained, or idle: the next enqueue starts a worker
      running_ = false;
      if (after_thread_end_) after_thread_end_();
      return;
    }
    auto [task, work] = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    run_task(task, *work);
    task = nullptr;
    lock.lock();
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace twinccl::emu
