// The emulator's Work: completed by the rank's stream with success or an exception.
//
//   auto work = std::make_shared<emu::EmuWork>();
//   work->track({...});   // optional: checker bookkeeping (task counters, waits, Works never
//   waited)
//   ... work->complete(nullptr) or work->complete(std::current_exception());
//   Work(work).wait();
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "checker.h"
#include "comm_failure.h"
#include "twinccl/work.h"

namespace twinccl::emu {

// Per communicator and rank: the highest task number whose Work was seen complete (wait(), test()
// or wait_for() returning true). Stream order makes every earlier task complete too.
struct WaitedThrough {
  std::atomic<std::uint64_t> task{0};
  void note(std::uint64_t t) {
    std::uint64_t seen = task.load();
    while (seen < t && !task.compare_exchange_weak(seen, t)) {
    }
  }
};

struct WorkTracking {
  Agent* stream = nullptr;  // counts the task's completion
  Agent* user = nullptr;    // the rank's thread, registered when wait() lasts
  std::uint64_t task = 0;   // 1-based task number on the stream
  std::shared_ptr<WaitedThrough> waited;
  Checker* checker = nullptr;
  std::string_view op;  // for messages
  std::uint64_t seq_plus_one = 0;
  std::source_location where;
  // The rank's communicator error state (comm_failure.h): a wait() that threw, or a Work abandoned
  // during stack unwinding, fails it, so nothing queued behind runs.
  std::shared_ptr<CommFailure> failure;
};

class EmuWork final : public WorkState {
 public:
  EmuWork() = default;
  explicit EmuWork(WorkTracking tracking) : tracking_(std::move(tracking)) {}
  void complete(std::exception_ptr error);
  // A group's Work between group_start (at `where`, rank `rank` of `comm`) and group_end: its
  // operations are not issued yet, so wait() throws InvalidArgument naming the group_start
  // instead of waiting forever (test() stays false, wait_for() times out).
  void hold_until_group_end(std::string comm, int rank, std::source_location where);
  void group_ended();
  // A group whose send/recv run on their own streams (p2p_per_peer_streams): this Work is done
  // when it and every part are; with !own_task it runs nothing itself (it is done at once and
  // leaves its stream's counters alone).
  void add_parts(std::vector<std::shared_ptr<EmuWork>> parts, bool own_task);
  void wait() override;
  bool test() override;
  bool wait_for(std::chrono::nanoseconds timeout) override;
  // A Work handle destroyed during stack unwinding: not started yet, the operation is cancelled
  // (and the communicator fails, cancelling what is queued behind it); running, the world is
  // aborted so that it stops, and this waits for it (bounded by the world's deadline).
  void abandoned() noexcept override;
  // Called by the task before it touches anything: false when the Work was abandoned (the task
  // must not run; CommFailure::cancellation says why).
  bool begin_running();
  // Its task touches no user memory (a discarded group's Work): abandoning it cancels nothing.
  void mark_inert();
  const WorkTracking& tracking() const { return tracking_; }

 private:
  void note_waited();
  void wait_own();
  WorkTracking tracking_;
  std::vector<std::shared_ptr<EmuWork>> parts_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  enum class Phase : std::uint8_t { queued, running, abandoned, inert };
  Phase phase_ = Phase::queued;
  std::exception_ptr error_;
  struct OpenGroup {
    bool open = false;
    std::string comm;
    int rank = -1;
    std::source_location where;
  };
  OpenGroup group_;
};

}  // namespace twinccl::emu
