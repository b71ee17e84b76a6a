#include "twinccl/emu/work_state.h"

namespace twinccl::emu {

void EmuWork::complete(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::move(error);
    done_ = true;
  }
  cv_.notify_all();
}

void EmuWork::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_; });  // the operation itself is bounded by World's deadline
  if (error_) std::rethrow_exception(error_);
}

bool EmuWork::test() {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

bool EmuWork::wait_for(std::chrono::nanoseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return done_; });
}

}  // namespace twinccl::emu
