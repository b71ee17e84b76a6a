#include "world.h"

#include <cstdio>
#include <exception>
#include <new>

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

std::string out_of_memory_text(const std::string& what, std::size_t bytes) {
  char size[32];
  std::snprintf(size, sizeof size, "%.1f GiB", static_cast<double>(bytes) / (1u << 30));
  return what + ": could not allocate " + std::to_string(bytes) + " bytes (" + size +
         "): out of memory (std::bad_alloc; the process's memory or its address-space limit, "
         "ulimit -v, is exhausted: lower the buffer sizes or the number of ranks)";
}

std::string current_error_text() {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return "out of memory (std::bad_alloc)";
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "a non-standard exception";
  }
}

void World::abort(const std::string& reason) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_.load(std::memory_order_relaxed)) return;
  try {
    reason_ = reason;
  } catch (...) {  // out of memory: the peers must still wake
    reason_lost_ = true;
  }
  aborted_.store(true, std::memory_order_release);
}

void World::abort_without_reason() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (aborted_.load(std::memory_order_relaxed)) return;
  reason_lost_ = true;
  aborted_.store(true, std::memory_order_release);
}

std::string World::abort_reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (reason_lost_) return "a rank failed while the process was out of memory (std::bad_alloc)";
  return reason_;
}

void World::check_abort() const {
  if (aborted()) throw AbortedError("operation aborted: " + abort_reason());
}

void World::mark_finished(int global_rank) {
  finished_[static_cast<std::size_t>(global_rank)].store(true);
  if (checker_) checker_->mark_finished(global_rank);
}

void World::note_failure(int global_rank, const std::string& text) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    failures_[static_cast<std::size_t>(global_rank)] = text;
  } catch (...) {  // out of memory: the peers only lose this detail
  }
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

void World::acquire_lane_thread(int max, const std::string& who) {
  std::unique_lock<std::mutex> lock(lanes_mu_);
  // Lanes that went idle end within kLaneIdle: a slot they hold is worth a short wait.
  if (!lanes_cv_.wait_for(lock, kLaneIdle * 3, [&] { return lane_threads_ < max; })) {
    throw ConfigError(
        who +
        " needs a thread: p2p_per_peer_streams runs one thread per (peer, direction) with "
        "send/recv in flight, and this run already has " +
        std::to_string(lane_threads_) + " (max_p2p_lane_threads = " + std::to_string(max) +
        ": TWINCCL_MAX_P2P_LANE_THREADS, twinccl.run(max_p2p_lane_threads=...), "
        "EmulatorOptions::max_p2p_lane_threads); raise it, or wait on some send/recv before "
        "issuing more");
  }
  ++lane_threads_;
}

void World::release_lane_thread() noexcept {
  {
    std::lock_guard<std::mutex> lock(lanes_mu_);
    --lane_threads_;
  }
  lanes_cv_.notify_all();
}

std::string World::where_ranks_stand() const {
  if (!checker_) return "";
  return checker_->where_ranks_stand([this](int rank) { return recorder_->latest(rank); });
}

void World::throw_timeout(const std::string& what, const WaitTimeout* bound) const {
  const std::chrono::milliseconds timeout = timeout_of(bound);
  auto seconds = std::chrono::duration<double>(timeout).count();
  // The rank's own timeout says what set it; the world's is TWINCCL_TIMEOUT_S (timeout_s).
  std::string source =
      bound != nullptr && bound->is_set() ? bound->source() : std::string("TWINCCL_TIMEOUT_S");
  std::string stand = where_ranks_stand();
  throw TimeoutError(what + " for " + std::to_string(seconds) + " s (" + source + ")" +
                     (stand.empty() ? std::string() : "; " + stand));
}

RankThread& this_rank_thread() noexcept {
  thread_local RankThread rank_thread;
  return rank_thread;
}

}  // namespace twinccl::emu
