#include "twinccl/emu/world.h"

namespace twinccl::emu {

void World::abort(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_.load(std::memory_order_relaxed)) return;
  reason_ = reason;
  aborted_.store(true, std::memory_order_release);
}

std::string World::abort_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

void World::check_abort() const {
  if (aborted()) throw AbortedError("operation aborted: " + abort_reason());
}

void World::throw_timeout(const std::string& what) const {
  auto seconds = std::chrono::duration<double>(timeout_).count();
  throw TimeoutError(what + " for " + std::to_string(seconds) + " s (TWINCCL_TIMEOUT_S)");
}

}  // namespace twinccl::emu
