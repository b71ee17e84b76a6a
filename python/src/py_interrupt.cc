// py_interrupt.h: Ctrl-C during twinccl.run. Everything here that touches the rank tables runs
// with the GIL held, so a rank cannot leave its function between "is it in Python?" and "raise
// KeyboardInterrupt in it" (PyThreadState_SetAsyncExc acts at the thread's next bytecode).
#include "py_interrupt.h"

#include <string>

#include "twinccl/errors.h"

namespace py = pybind11;

namespace twinccl::python {
namespace {
// After this long, ranks still running Python are in a call that an asynchronous exception does
// not reach (time.sleep, blocking I/O, C code) or caught it: say which ones twinccl.run waits for.
constexpr std::chrono::seconds kTellStuckAfter{2};

// The runs in progress in this process (touched with the GIL held): a signal is seen by the main
// thread's run only, and stops them all.
std::vector<RunInterrupts*>& active_runs() {
  static std::vector<RunInterrupts*> runs;
  return runs;
}
}  // namespace

RunInterrupts::RunInterrupts(int world_size)
    : thread_of_rank_(static_cast<std::size_t>(world_size), 0) {
  active_runs().push_back(this);
}

RunInterrupts::~RunInterrupts() { std::erase(active_runs(), this); }

std::string RunInterrupts::poll() {
  py::gil_scoped_acquire gil;
  // Runs the Python signal handlers when this is the main thread (only there can they run).
  if (PyErr_CheckSignals() != 0) {
    if (!interrupted()) {
      error_.emplace();  // fetches the handler's exception (KeyboardInterrupt)
      start_stopping();
    } else {
      PyErr_Clear();  // a second Ctrl-C: interrupt the ranks again, keep the first exception
    }
    interrupt_ranks();
  }
  if (!interrupted()) return "";
  tell_stuck_ranks();
  if (!error_) return "an enclosing or concurrent twinccl.run was interrupted";
  return "twinccl.run was interrupted (" + std::string(py::str(error_->type().attr("__name__"))) +
         ")";
}

void RunInterrupts::start_stopping() {
  interrupted_at_ = std::chrono::steady_clock::now();
  for (RunInterrupts* other : active_runs()) {
    if (other == this || other->interrupted()) continue;
    other->stopped_by_other_ = true;
    other->interrupted_at_ = interrupted_at_;
    other->interrupt_ranks();
  }
}

void RunInterrupts::interrupt_ranks() {
  for (unsigned long thread : thread_of_rank_)
    if (thread != 0) PyThreadState_SetAsyncExc(thread, PyExc_KeyboardInterrupt);
}

void RunInterrupts::tell_stuck_ranks() {
  if (told_stuck_ || std::chrono::steady_clock::now() - interrupted_at_ < kTellStuckAfter) return;
  std::string ranks;
  for (std::size_t r = 0; r < thread_of_rank_.size(); ++r)
    if (thread_of_rank_[r] != 0) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  if (ranks.empty()) return;
  told_stuck_ = true;
  const std::string note =
      "twinccl.run: interrupted; waiting for rank(s) " + ranks +
      " still in Python code (a call KeyboardInterrupt does not reach, such as time.sleep or "
      "blocking I/O, or code that caught it); Ctrl-C again raises KeyboardInterrupt in them "
      "again\n";
  PySys_WriteStderr("%s", note.c_str());
}

void RunInterrupts::raise() const {
  if (!error_)
    throw AbortedError(
        "twinccl.run was stopped: an enclosing or concurrent twinccl.run was interrupted");
  throw *error_;
}

void RunInterrupts::stop_ranks_in_python(std::chrono::steady_clock::time_point since,
                                         const std::string& why, const py::object& aborted_type) {
  if (interrupted() || std::chrono::steady_clock::now() - since < kStopRanksAfter) return;
  ranks_stopped_ = true;
  stop_sent_.resize(thread_of_rank_.size(), false);
  py::object make;
  for (std::size_t r = 0; r < thread_of_rank_.size(); ++r) {
    // Once per rank: also a rank whose function started after the stop (it waited for its turn).
    if (thread_of_rank_[r] == 0 || stop_sent_[r]) continue;
    stop_sent_[r] = true;
    if (!make) make = py::module_::import("twinccl._stopped").attr("stopped_error");
    const std::string message =
        "twinccl.run stopped rank " + std::to_string(r) + ": it was still running Python code " +
        std::to_string(kStopRanksAfter.count()) + " s after the run was stopped (" + why +
        "), as torchrun stops the other workers when one fails";
    // A class, as PyThreadState_SetAsyncExc raises it without arguments: it carries the message.
    py::object error = make(aborted_type, message);
    PyThreadState_SetAsyncExc(thread_of_rank_[r], error.ptr());
    stopped_errors_.push_back(std::move(error));  // alive while the rank may still raise it
  }
}

RankInPython::RankInPython(RunInterrupts& interrupts, int rank)
    : interrupts_(interrupts), rank_(rank) {
  if (interrupts_.interrupted())
    throw AbortedError("twinccl.run was interrupted before rank " + std::to_string(rank) +
                       " started its function");
  interrupts_.thread_of_rank_[static_cast<std::size_t>(rank)] = PyThread_get_thread_ident();
}

RankInPython::~RankInPython() {
  unsigned long& thread = interrupts_.thread_of_rank_[static_cast<std::size_t>(rank_)];
  if (interrupts_.interrupted() || interrupts_.ranks_stopped_)
    PyThreadState_SetAsyncExc(thread, nullptr);  // sent too late: not raised after fn
  thread = 0;
}

}  // namespace twinccl::python
