#include "comm_failure.h"

#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "world.h"

namespace twinccl::emu {

CommFailure::CommFailure(std::shared_ptr<World> world, std::string comm, int rank)
    : world_(std::move(world)), comm_(std::move(comm)), rank_(rank) {}

std::string CommFailure::label(std::string_view op, std::uint64_t seq_plus_one,
                               const std::source_location& where) const {
  std::string what(op);
  if (seq_plus_one != 0) what += " #" + std::to_string(seq_plus_one - 1);
  return call_site_text(what, comm_, rank_, where);
}

void CommFailure::fail(const std::string& what) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    if (failed_.load(std::memory_order_relaxed)) return;
    first_ = what;
    failed_.store(true, std::memory_order_release);
  } catch (...) {  // no memory for the text: still cancel what is queued
    failed_.store(true, std::memory_order_release);
  }
}

std::string CommFailure::first() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_;
}

std::exception_ptr CommFailure::cancellation(const std::string& label) const {
  if (failed()) {
    static constexpr std::string_view kWhy =
        " (this rank's communicator is in an error state, as NCCL's after an asynchronous error: "
        "what was queued behind the failed operation, or issued later, is cancelled)";
    std::lock_guard<std::mutex> lock(mu_);
    std::string text = label + " was cancelled before it started: " + first_;
    if (first_.find(kWhy) == std::string::npos) text += kWhy;  // said once when failures chain
    return std::make_exception_ptr(AbortedError(text));
  }
  if (world_->aborted()) {
    return std::make_exception_ptr(AbortedError("operation aborted: " + world_->abort_reason() +
                                                " (" + label +
                                                " was cancelled before it started)"));
  }
  return nullptr;
}

void CommFailure::abort_world(const std::string& reason) noexcept {
  try {
    world_->abort(reason);
  } catch (...) {  // abort() only allocates the reason's text
  }
}

std::chrono::milliseconds CommFailure::timeout() const { return world_->timeout(); }

}  // namespace twinccl::emu
