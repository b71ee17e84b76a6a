#include "world.h"

namespace twinccl::emu {

World::World(int size, std::chrono::milliseconds timeout, WorldChecks checks)
    : size_(size),
      timeout_(timeout),
      finished_(static_cast<std::size_t>(size)),
      misuse_(static_cast<std::size_t>(size)),
      failures_(static_cast<std::size_t>(size)) {
  if (checks.enabled) {
    checker_ = std::make_unique<Checker>(size);
    checker_->explain_returned([this](int rank) { return returned_note(rank); });
    recorder_ = std::make_unique<FlightRecorder>(size, checks.flight_recorder_ops);
  }
}

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

void World::mark_finished(int global_rank) {
  finished_[static_cast<std::size_t>(global_rank)].store(true);
  if (checker_) checker_->mark_finished(global_rank);
}

void World::note_failure(int global_rank, const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_[static_cast<std::size_t>(global_rank)] = text;
}

std::string World::returned_note(int global_rank) const {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string& text = failures_[static_cast<std::size_t>(global_rank)];
  return text.empty() ? std::string() : " (before returning, it failed: " + text + ")";
}

void World::report_misuse(int global_rank, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string& slot = misuse_[static_cast<std::size_t>(global_rank)];
  if (slot.empty()) slot = message;
}

std::string World::take_misuse(int global_rank) {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(misuse_[static_cast<std::size_t>(global_rank)]);
}

std::string World::where_ranks_stand() const {
  if (!checker_) return "";
  return checker_->where_ranks_stand([this](int rank) { return recorder_->latest(rank); });
}

void World::throw_timeout(const std::string& what) const {
  auto seconds = std::chrono::duration<double>(timeout_).count();
  std::string stand = where_ranks_stand();
  throw TimeoutError(what + " for " + std::to_string(seconds) + " s (TWINCCL_TIMEOUT_S)" +
                     (stand.empty() ? std::string() : "; " + stand));
}

}  // namespace twinccl::emu
