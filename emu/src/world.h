// World: what all ranks of one emulated run share: the abort signal, the wait deadline, and (with
// checks on) the deadlock checker and the flight recorder.
// Every blocking wait in the emulator goes through World::wait so that one failing rank turns
// into an AbortedError on every other rank instead of a hang, a deadlock into a DeadlockError,
// and a rank that never arrives into a TimeoutError saying where every rank stands.
//
//   auto world = std::make_shared<emu::World>(8, std::chrono::seconds(300));
//   world->wait(lock, cv, [&] { return ready; }, [&] { return "waiting for rank 3"; });
//   world->abort("rank 2 threw: ...");   // wakes every waiter with AbortedError
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "checker.h"
#include "flight_recorder.h"
#include "gate.h"
#include "twinccl/errors.h"
#include "wait_timeouts.h"
#include "yields_before_sleep.h"

namespace twinccl::emu {

struct WorldChecks {
  bool enabled = true;                   // deadlock checker and flight recorder
  std::size_t flight_recorder_ops = 64;  // per rank
};

// "<what>: could not allocate 1073741824 bytes (1.0 GiB): out of memory (std::bad_alloc; ...)",
// the text of the ResourceError an allocation the emulator makes for a rank ends with.
std::string out_of_memory_text(const std::string& what, std::size_t bytes);
// Inside a catch block: what the exception says ("out of memory (std::bad_alloc)" for that one).
std::string current_error_text();

class World;

// The rank thread the caller runs on, set by run_world on each rank's thread (other threads:
// {nullptr, -1}): a call on a communicator of another rank of the same world is refused.
struct RankThread {
  const World* world = nullptr;
  int global_rank = -1;
};
RankThread& this_rank_thread() noexcept;

class World {
 public:
  World(int size, std::chrono::milliseconds timeout, WorldChecks checks = {});

  int size() const { return size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }
  // nullptr when checks are off.
  Checker* checker() const { return checker_.get(); }
  FlightRecorder* recorder() const { return recorder_.get(); }

  // First reason wins; later calls are ignored. Waiters notice within one poll period. Never
  // throws: out of memory for the reason's copy, the world still aborts (with a fixed reason).
  void abort(const std::string& reason) noexcept;
  // The same when even the reason's text could not be made (out of memory).
  void abort_without_reason() noexcept;
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  std::string abort_reason() const;
  // Throws AbortedError when the world was aborted.
  void check_abort() const;

  // A rank's function returned: nobody waits for it any more (see Rendezvous).
  void mark_finished(int global_rank);
  bool finished(int global_rank) const {
    return finished_[static_cast<std::size_t>(global_rank)].load();
  }

  // What made a rank fail (a call it made was rejected, one of its operations failed, its
  // function threw): quoted to the peers that find it returned, so they learn why it never came.
  void note_failure(int global_rank, const std::string& text) noexcept;  // (kept short of memory)
  // " (before returning, it failed: ...)" for a rank with a noted failure, else "".
  std::string returned_note(int global_rank) const;

  // Misuse found where nothing can throw (a destructor): reported when the rank's function returns.
  void report_misuse(int global_rank, const std::string& message);
  std::string take_misuse(int global_rank);

  // p2p_per_peer_streams lane threads alive in this run: one more, at most `max` (a thread
  // ending when idle frees its slot: waits a little for one); else ConfigError naming `who`.
  void acquire_lane_thread(int max, const std::string& who);
  void release_lane_thread() noexcept;
  static constexpr std::chrono::milliseconds kLaneIdle{20};  // a lane's idle worker then ends

  // "where every rank stands: rank 0: in all_reduce #3 ...; rank 1: running its own code [...]".
  std::string where_ranks_stand() const;

  // Waits on `cv` until pred() holds. Throws AbortedError when the world aborts and TimeoutError
  // (with what() + " after N s" + where every rank stands) when the deadline passes.
  // `hopeless` (optional) is called at every poll and throws when the wait can never succeed.
  // `site` (optional) describes the wait to the checker: once the wait lasted one poll period it
  // is registered, and every poll may throw DeadlockError (checked before the abort flag, so every
  // agent of a cycle reports the cycle even after the first one's failure aborted the world).
  // `bound` (optional): the waiting rank's own timeout on its communicator, when it set one.
  template <class Pred>
  void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Pred pred,
            const std::function<std::string()>& what, const std::function<void()>& hopeless = {},
            const WaitSite* site = nullptr, const WaitTimeout* bound = nullptr) const {
    if (pred()) return;
    // As Gate::wait: yield the CPU a few times first (the lock released), since with more rank
    // threads than cores the thread this one waits for usually runs meanwhile, and then neither
    // side makes a futex call (a schedule's step-by-step send/recv waits); no yields while they
    // are slow (other processes load the cores: yields_before_sleep.h).
    for (YieldsBeforeSleep yields(kYieldsBeforeSleep); yields.wanted();) {
      lock.unlock();
      yields.yield();
      lock.lock();
      if (pred()) return;
    }
    auto deadline = std::chrono::steady_clock::now() + timeout_of(bound);
    Registration registration(site != nullptr && site->agent != nullptr ? checker_.get() : nullptr,
                              site);
    bool first = true;
    while (!pred()) {
      if (!first) registration.poll(aborted());
      first = false;
      check_abort();
      if (hopeless) check_hopeless(hopeless);
      if (cv.wait_for(lock, kPollPeriod) == std::cv_status::timeout &&
          std::chrono::steady_clock::now() >= deadline && !pred()) {
        throw_timeout(what(), bound);
      }
    }
  }

  // The same guarantees for a wait on a Gate (no lock held while sleeping): waits until pred()
  // holds, pred() reading atomics; what() and hopeless() take the locks they need themselves.
  template <class Pred, class What, class Hopeless>
  void wait(Gate& gate, Pred pred, const What& what, const Hopeless& hopeless,
            const WaitSite* site = nullptr, const WaitTimeout* bound = nullptr) const {
    if (pred()) return;
    auto deadline = std::chrono::steady_clock::now() + timeout_of(bound);
    Registration registration(site != nullptr && site->agent != nullptr ? checker_.get() : nullptr,
                              site);
    bool first = true;
    for (;;) {
      std::uint32_t seen = gate.value();
      if (pred()) return;
      if (!first) registration.poll(aborted());
      first = false;
      check_abort();
      check_hopeless(hopeless);
      gate.wait(seen, kPollPeriod);
      if (!pred() && std::chrono::steady_clock::now() >= deadline) throw_timeout(what(), bound);
    }
  }

  // Runs hopeless(); when it throws (a peer already returned), an abort that came first wins: a
  // failing rank aborts the world before it is marked finished, so a waiter that checked the
  // abort flag just before the failure, then saw the rank finished, reports the failure itself.
  template <class Hopeless>
  void check_hopeless(const Hopeless& hopeless) const {
    try {
      hopeless();
    } catch (...) {
      check_abort();
      throw;
    }
  }

  static constexpr std::chrono::milliseconds kPollPeriod{20};
  static constexpr int kYieldsBeforeSleep = 4;  // the condition-variable wait's (gate.h's too)

 private:
  // A wait known to the checker; unregistered when the wait ends (success or throw).
  class Registration {
   public:
    Registration(Checker* checker, const WaitSite* site) : checker_(checker), site_(site) {}
    ~Registration() {
      if (registered_) checker_->unregister(*site_);
    }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    void poll(bool aborted) {
      if (checker_ != nullptr) checker_->poll(*site_, registered_, aborted);
    }

   private:
    Checker* checker_;
    const WaitSite* site_;
    bool registered_ = false;
  };

  // The rank's own timeout when it set one, else the world's.
  std::chrono::milliseconds timeout_of(const WaitTimeout* bound) const {
    return bound != nullptr && bound->is_set() ? bound->timeout() : timeout_;
  }
  [[noreturn]] void throw_timeout(const std::string& what, const WaitTimeout* bound) const;

  int size_;
  std::chrono::milliseconds timeout_;
  std::vector<std::atomic<bool>> finished_;
  std::atomic<bool> aborted_{false};
  mutable std::mutex mu_;
  std::string reason_;
  bool reason_lost_ = false;  // no memory to copy the first reason
  std::vector<std::string> misuse_;
  std::vector<std::string> failures_;
  std::mutex lanes_mu_;
  std::condition_variable lanes_cv_;
  int lane_threads_ = 0;
  std::unique_ptr<Checker> checker_;
  std::unique_ptr<FlightRecorder> recorder_;
};

}  // namespace twinccl::emu
