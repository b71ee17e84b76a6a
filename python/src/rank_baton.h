// The rank baton: the ranks of a twinccl.run take turns running Python, so that each can have its
// own process state (torch's, NumPy's and Python's random generators, os.environ,
// torch.distributed's default group, the user's module globals: DESIGN.md decision 11). A rank
// holds the baton while it runs Python and gives it up only while it blocks in a TwinCCL call or
// wait (where the GIL is released too) and when its function ends. The rank that takes the baton
// asks Python (twinccl/_rank_state.py) to swap the process state from the last holder's to its
// own, lazily: a rank that takes the baton back from itself swaps nothing, and a hand-over whose
// state lies in RankSlots (rank_slots.h: generators' memory, dicts) runs no Python at all.
//
//   RankBaton baton(swap, timeout_s);  // caller, GIL held; swap(leaving, arriving, serial)
//   options.stop_requested = [&] { return baton.stop_reason(); };
//   // rank thread, GIL released:  RankTurn turn(&baton, rank);   (waits for the baton)
//   //   GIL held: turn.arrived();  fn(rank);
//   // in a TwinCCL call, GIL held:  BlockingCall nogil;  work.wait();
//
// Lock order: the baton is always waited for with the GIL released; a holder releases the GIL,
// then gives the baton up (straight to the next waiting rank). Non-rank threads (the caller's,
// threads a rank started) never take it.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "rank_slots.h"

namespace twinccl::python {

class RankBaton {
 public:
  // `swap(leaving, arriving, serial)` (GIL held) saves rank `leaving`'s state (-1: the caller's)
  // and installs `arriving`'s; called again with the same serial, it resumes a swap that an
  // asynchronous exception cut (KeyboardInterrupt, or the AbortedError that stops a run's ranks
  // still in Python: RunInterrupts::stop_ranks_in_python). A rank waiting for its turn longer than
  // `timeout_s` stops the run.
  RankBaton(pybind11::function swap, double timeout_s);
  RankBaton(const RankBaton&) = delete;
  RankBaton& operator=(const RankBaton&) = delete;

  void wait_for_turn(int rank);  // GIL released; first come, first served
  // For EmulatorOptions::stop_requested: why the run must stop (a rank waited for its turn
  // longer than timeout_s), else "".
  std::string stop_reason();
  // A wait timeout the script set on a group (torch's timeout=, set_timeout: `source` names it):
  // a rank then waits that long for its turn too, when it is longer than timeout_s, since under
  // torch it would have gone on to its group's operation and waited there that long.
  void allow_turn_wait(double seconds, const std::string& source);
  void install(int rank);      // GIL held, baton held: this rank's state in place
  void give_up(int rank);      // GIL held or not
  void give_back_to_caller();  // GIL held, every rank ended: the caller's state in place
  int installed() const { return installed_; }  // whose state is in place (-1: the caller's)
  int holder();                                 // the rank holding the baton (-1: none); any thread
  // time.sleep on a rank (twinccl._sleep_off_turn; GIL released, turn given up): ends early with
  // AbortedError once the run is stopped (stop_sleepers), as a process's sleep ends when torchrun
  // stops its workers; else a rank in time.sleep(600) kept a failed run alive for 10 minutes.
  void sleep(int rank, double seconds);
  // A wait for input on file descriptors on a rank (twinccl._wait_readable_off_turn: a Queue's
  // or a Pipe end's reader; GIL released, turn given up): poll(2) up to `seconds`, in slices of
  // at most 50 ms that check whether the run stopped (AbortedError, as sleep()). True when one is
  // readable, closed or invalid (the read that follows says which), false when the time is up.
  bool wait_readable(int rank, const std::vector<int>& fds, double seconds);
  void stop_sleepers(const std::string& why);            // any thread: the run was stopped
  const std::string& failed() const { return failed_; }  // why a swap failed (else empty)

  // The baton of this thread's run, when the thread is one of its ranks (else nullptr).
  static RankBaton* of_this_thread();
  static int rank_of_this_thread();

 private:
  friend class RankTurn;
  friend class BlockingCall;
  // GIL held: _rank_state.py's swap, then slots_; returns the first asynchronous exception that
  // cut it (the caller raises it: the state is whole by then).
  std::optional<pybind11::error_already_set> python_swap(int leaving, int arriving);
  // mu_ held, the run stopped: the AbortedError that ends `what` (a sleep, a wait) on `rank`.
  [[noreturn]] void throw_stopped(const std::string& what, int rank) const;
  // A rank waiting for its turn. give_up() hands the baton straight to the first waiter and wakes
  // that one only (a notify_all woke every waiter at every hand-over: 7 needless context switches
  // per hand-over at 8 ranks, the largest part of a hand-over's cost on a loaded machine).
  struct Waiter {
    int rank = -1;
    bool granted = false;
    std::condition_variable wake;
  };
  std::mutex mu_;
  std::deque<Waiter*> queue_;  // ranks waiting, in arrival order
  int holder_ = -1;
  int installed_ = -1;
  std::chrono::steady_clock::time_point held_since_;
  pybind11::function swap_;
  std::uint64_t swap_serial_ = 0;     // GIL held: one per python_swap
  RankSlots slots_;                   // GIL held
  std::string failed_;                // GIL held
  double timeout_s_;                  // guarded by mu_: the longest wait for a turn
  std::string timeout_source_;        // guarded by mu_: what set it ("" = twinccl.run's timeout_s)
  std::string stop_reason_;           // guarded by mu_
  std::condition_variable sleepers_;  // with mu_: ranks in sleep()
  std::string sleepers_stopped_;      // guarded by mu_: why the run stopped (else empty)
};

// A rank thread's turn: waits for the baton (GIL released) in its constructor and gives it up in
// its destructor. Registers the baton for BlockingCall on this thread.
class RankTurn {
 public:
  RankTurn(RankBaton* baton, int rank);  // baton may be null: no turns (rank_state="shared")
  ~RankTurn();
  RankTurn(const RankTurn&) = delete;
  RankTurn& operator=(const RankTurn&) = delete;
  void arrived();  // GIL held: installs this rank's state

 private:
  RankBaton* baton_;
  int rank_;
};

// Where a TwinCCL call blocks: gives up the baton (when this thread is a rank of a run with one)
// and releases the GIL; on the way out waits for the baton (GIL released), takes the GIL and
// installs this rank's state again. Elsewhere just py::gil_scoped_release.
class BlockingCall {
 public:
  BlockingCall();
  ~BlockingCall();
  BlockingCall(const BlockingCall&) = delete;
  BlockingCall& operator=(const BlockingCall&) = delete;

 private:
  RankBaton* baton_;
  int rank_;
  PyThreadState* saved_ = nullptr;
};

// time.sleep for ranks that take turns (twinccl/_rank_state.py patches it during a run): a
// sleeping rank gives up its turn, as a sleeping process leaves the others running.
void bind_rank_baton(pybind11::module_& m);

}  // namespace twinccl::python
