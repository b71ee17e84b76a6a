#include "work_state.h"

#include "twinccl/errors.h"
#include "twinccl/operation.h"
#include "world.h"

namespace twinccl::emu {

void EmuWork::complete(std::exception_ptr error) {
  if (tracking_.stream != nullptr) tracking_.stream->completed.fetch_add(1);  // before anyone wakes
  {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::move(error);
    done_ = true;
  }
  cv_.notify_all();
}

void EmuWork::hold_until_group_end(std::string comm, int rank, std::source_location where) {
  std::lock_guard<std::mutex> lock(mu_);
  group_ = {true, std::move(comm), rank, where};
}

void EmuWork::group_ended() {
  std::lock_guard<std::mutex> lock(mu_);
  group_.open = false;
}

void EmuWork::note_waited() {
  if (tracking_.waited) tracking_.waited->note(tracking_.task);
}

void EmuWork::add_parts(std::vector<std::shared_ptr<EmuWork>> parts, bool own_task) {
  std::lock_guard<std::mutex> lock(mu_);
  parts_ = std::move(parts);
  if (!own_task) {
    tracking_.stream = nullptr;  // its task number is never run: nothing to count or note
    tracking_.waited = nullptr;
    done_ = true;
  }
}

void EmuWork::wait() {
  std::vector<std::shared_ptr<EmuWork>> parts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    parts = parts_;
  }
  if (parts.empty()) return wait_own();
  // Every part is waited for (each is bounded by the world's deadline and the checker), so that no
  // part still runs when wait() returns; the first error is rethrown.
  std::exception_ptr first;
  try {
    wait_own();
  } catch (...) {
    first = std::current_exception();
  }
  for (const auto& part : parts) {
    try {
      part->wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

void EmuWork::wait_own() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!done_ && group_.open) {
    throw InvalidArgument(
        "comm '" + group_.comm + "' rank " + std::to_string(group_.rank) +
        ": wait() on a Work of the group opened by group_start (" +
        describe_call_site(group_.where) +
        "), which is still open: its operations are issued only at group_end, so the wait could "
        "never finish; call group_end() before waiting (NCCL's rule for grouped operations)");
  }
  if (!done_) {
    // The operation itself is bounded by World's deadline. A wait that lasts is shown to the
    // checker (the rank's thread waits for its stream), so cycles through it are found.
    WaitSite site;
    site.agent = tracking_.user;
    site.kind = WaitKind::work;
    site.target = tracking_.stream;
    site.task = tracking_.task;
    site.op = tracking_.op;
    site.seq = tracking_.seq_plus_one;
    site.where = tracking_.where;
    bool registered = false;
    bool can_register =
        tracking_.checker != nullptr && tracking_.user != nullptr && tracking_.stream != nullptr;
    while (!done_) {
      if (cv_.wait_for(lock, World::kPollPeriod) == std::cv_status::timeout && can_register &&
          !registered) {
        lock.unlock();
        try {
          tracking_.checker->poll(site, registered);
        } catch (const std::exception& e) {
          // The rank's thread stops waiting (a deadlock): what is queued behind must not run.
          if (tracking_.failure) {
            tracking_.failure->fail(
                "the wait() for " +
                tracking_.failure->label(tracking_.op, tracking_.seq_plus_one, tracking_.where) +
                " failed: " + e.what());
          }
          lock.lock();
          throw;
        } catch (...) {
          lock.lock();
          throw;
        }
        lock.lock();
      }
    }
    if (registered) tracking_.checker->unregister(site);
  }
  note_waited();
  if (error_) std::rethrow_exception(error_);
}

bool EmuWork::begin_running() {
  std::lock_guard<std::mutex> lock(mu_);
  if (phase_ == Phase::abandoned) return false;
  phase_ = Phase::running;
  return true;
}

void EmuWork::mark_inert() {
  std::lock_guard<std::mutex> lock(mu_);
  phase_ = Phase::inert;
}

void EmuWork::abandoned() noexcept {
  std::vector<std::shared_ptr<EmuWork>> parts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    parts = parts_;
  }
  for (const auto& part : parts) part->abandoned();
  std::unique_lock<std::mutex> lock(mu_);
  // An open group was never issued; an inert Work runs nothing of the user's.
  // Abandoned already (a Work and the handle wrapping it, both destroyed) stays so.
  if (done_ || group_.open || phase_ == Phase::inert || phase_ == Phase::abandoned ||
      !tracking_.failure)
    return;
  CommFailure& failure = *tracking_.failure;
  try {
    std::string label = failure.label(tracking_.op, tracking_.seq_plus_one, tracking_.where);
    if (phase_ == Phase::queued) {
      // Failing the communicator first: the task, finding itself abandoned, reads why.
      failure.fail("the Work of " + label +
                   " was destroyed during stack unwinding before the operation started");
      phase_ = Phase::abandoned;
      return;
    }
    std::string mine =
        "the Work of " + label + " was destroyed during stack unwinding while the operation ran";
    failure.fail(mine);
    std::string first = failure.first();
    lock.unlock();
    failure.abort_world(
        label +
        ": its Work was destroyed during stack unwinding while the operation ran "
        "(the memory it uses is being freed): the run is aborted so that it stops" +
        (first == mine ? std::string() : " (first failure on this rank: " + first + ")"));
    lock.lock();
    // Every wait of a running operation is abort-aware and bounded by the world's deadline.
    cv_.wait_for(lock, failure.timeout() + World::kPollPeriod * 2, [&] { return done_; });
  } catch (...) {  // no memory for a message: nothing more can be done from a destructor
  }
}

bool EmuWork::test() {
  std::vector<std::shared_ptr<EmuWork>> parts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    parts = parts_;
  }
  for (const auto& part : parts) {
    if (!part->test()) return false;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (done_) note_waited();
  return done_;
}

bool EmuWork::wait_for(std::chrono::nanoseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::vector<std::shared_ptr<EmuWork>> parts;
  {
    std::lock_guard<std::mutex> lock(mu_);
    parts = parts_;
  }
  for (const auto& part : parts) {
    if (!part->wait_for(deadline - std::chrono::steady_clock::now())) return false;
  }
  std::unique_lock<std::mutex> lock(mu_);
  bool done = cv_.wait_until(lock, deadline, [&] { return done_; });
  if (done) note_waited();
  return done;
}

}  // namespace twinccl::emu
