// Ranks that never return after a run was stopped: blocked outside Python and outside TwinCCL (in
// C++ code they called, such as a torch Future's wait inside DDP's backward, or a lock), where
// neither the world's abort nor the asynchronous AbortedError (py_interrupt.h) reaches them. The
// run's join would wait for them for ever, silently.
//
//   StuckRanks stuck(world_size, exit_if_stuck);     // exit_if_stuck: the launcher's process
//   // rank thread, when its function ends (returned or raised):  stuck.returned(rank);
//   // run_world's stop poll, once the run was stopped:  stuck.check(since, why, holder);
//
// How it works: kReportAfter after the stop, the ranks whose function has not returned are named
// on stderr once (with the rank that holds the turn to run Python, when there is one). With
// exit_if_stuck (python -m twinccl.torchrun) the process then ends with exit status 1, as
// torchrun's agent ends the workers left when one failed; twinccl.run called from a program
// cannot abandon threads that still use the run's state, so it goes on waiting, having said why.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

namespace twinccl::python {

class StuckRanks {
 public:
  static constexpr std::chrono::seconds kReportAfter{5};

  StuckRanks(int world_size, bool exit_if_stuck);
  void returned(int rank);  // any thread
  // Joining thread, GIL held, every stop poll after the stop at `since` for `why`; `holder`: the
  // rank holding the turn to run Python (-1: none or no turns).
  void check(std::chrono::steady_clock::time_point since, const std::string& why, int holder);

 private:
  int n_;
  bool exit_;
  bool reported_ = false;
  std::unique_ptr<std::atomic<bool>[]> returned_;
};

}  // namespace twinccl::python
