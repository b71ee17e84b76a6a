// Ctrl-C (and any Python signal handler) during twinccl.run. The calling thread waits in
// emu::run_world without the GIL; run_world asks poll() every 50 ms (EmulatorOptions::
// stop_requested), which runs Python's signal handlers there. When one raises (KeyboardInterrupt):
// the world is aborted (every rank waiting in TwinCCL gets AbortedError at once, queued operations
// are cancelled), every rank running Python code gets KeyboardInterrupt raised in its thread, the
// ranks are joined, and twinccl.run raises the caller's KeyboardInterrupt. Runs started inside
// ranks (nested) or on other Python threads are stopped too (AbortedError): only the main thread
// sees signals, so the interrupted run tells every active one.
//
//   RunInterrupts interrupts(world_size);
//   o.stop_requested = [&] { return interrupts.poll(); };
//   // rank thread, GIL held:  RankInPython in_python(interrupts, rank);  fn(rank);
//   // after run_world, GIL held:  if (interrupts.interrupted()) interrupts.raise();
//
// The same tables stop a run that ended otherwise (a rank failed, timeout_s passed): once the
// world was aborted, ranks still running Python code kStopRanksAfter later (a `while True:` that
// never calls TwinCCL again would be joined forever) get AbortedError raised in their thread,
// carrying `why` (stop_ranks_in_python), as torchrun stops the other workers when one fails.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace twinccl::python {

class RunInterrupts {
 public:
  explicit RunInterrupts(int world_size);  // GIL held (registers the run)
  ~RunInterrupts();                        // GIL held
  RunInterrupts(const RunInterrupts&) = delete;
  RunInterrupts& operator=(const RunInterrupts&) = delete;

  // For run_world, without the GIL: "" while nothing asked to stop, else the reason.
  std::string poll();
  // With the GIL, once run_world returned: whether a signal handler raised (here, or in the run
  // that stopped this one), and raising it (AbortedError for a run stopped by another).
  bool interrupted() const { return error_.has_value() || stopped_by_other_; }
  [[noreturn]] void raise() const;

  // GIL held. The run was stopped (`why`: a rank failed, or its stop reason) at `since`: from
  // kStopRanksAfter on, raises AbortedError(`why`) once in every rank running Python code
  // (`aborted_type`: twinccl.AbortedError; twinccl/_stopped.py makes the class carrying `why`).
  void stop_ranks_in_python(std::chrono::steady_clock::time_point since, const std::string& why,
                            const pybind11::object& aborted_type);
  static constexpr std::chrono::seconds kStopRanksAfter{1};

 private:
  friend class RankInPython;
  void interrupt_ranks();  // GIL held
  void start_stopping();   // GIL held: the first interruption; stops the other active runs
  void tell_stuck_ranks();
  std::vector<unsigned long> thread_of_rank_;  // its Python thread id while in fn, else 0
  std::optional<pybind11::error_already_set> error_;
  std::chrono::steady_clock::time_point interrupted_at_;
  bool told_stuck_ = false;
  bool stopped_by_other_ = false;
  bool ranks_stopped_ = false;   // stop_ranks_in_python raised in the ranks running Python
  std::vector<bool> stop_sent_;  // per rank: it did
  std::vector<pybind11::object> stopped_errors_;  // the classes it raised
};

// The scope in which a rank thread runs the user's Python function (constructed and destroyed with
// the GIL held): poll() may raise KeyboardInterrupt in it. Throws AbortedError when the run was
// interrupted before the rank started; the destructor drops a KeyboardInterrupt sent too late.
class RankInPython {
 public:
  RankInPython(RunInterrupts& interrupts, int rank);
  ~RankInPython();
  RankInPython(const RankInPython&) = delete;
  RankInPython& operator=(const RankInPython&) = delete;

 private:
  RunInterrupts& interrupts_;
  int rank_;
};

}  // namespace twinccl::python
