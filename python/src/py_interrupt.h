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
