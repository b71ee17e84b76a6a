// py_comm.h: rank state, the current rank, Works, groups.
#include "py_comm.h"

#include <pthread.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "call_site.h"
#include "py_buffer.h"
#include "rank_baton.h"
#include "twinccl/emu/emulator.h"
#include "twinccl/errors.h"
#include "twinccl/trace/trace.h"

namespace py = pybind11;

namespace twinccl::python {
namespace {
thread_local std::shared_ptr<RankState> current_rank;
int forked_from_rank = -1;  // in a process forked from rank N's thread (a DataLoader worker): N

// The forked process holds the rank's thread alone, not the emulator's other threads: its
// communicators would wait for ranks that are not there. Their use is refused (this_thread_text).
void forget_rank_in_child() {
  if (current_rank) forked_from_rank = current_rank->rank;
  current_rank.reset();
}
}  // namespace

void RankState::close() {
  alive = false;
  groups.clear();
}

namespace {
// "rank 3's thread" / "a thread that is not one of twinccl.run's ranks (...)".
std::string this_thread_text() {
  if (current_rank) return "rank " + std::to_string(current_rank->rank) + "'s thread";
  if (forked_from_rank >= 0)
    return "a process forked from rank " + std::to_string(forked_from_rank) +
           "'s thread (a DataLoader worker, multiprocessing with fork)";
  return "a thread that is not one of twinccl.run's rank threads (a thread the rank function "
         "started, or the caller's)";
}
}  // namespace

// Where a forked process (a DataLoader worker) calls a collective: under torchrun its group
// would be the parent's, whose other processes are not waiting for it either.
const char* const kForkedAdvice =
    ": the emulated ranks are threads of the parent process, so a forked process cannot take "
    "part in their operations; make the call in the rank itself (the training loop), not in a "
    "Dataset or worker_init_fn";

Communicator& Comm::get() const {
  if (current_rank == state_) return *comm_;
  if (!current_rank && forked_from_rank >= 0)
    throw InvalidArgument("communicator '" + comm_->name() + "' of rank " +
                          std::to_string(state_->rank) + " is used in " + this_thread_text() +
                          kForkedAdvice);
  if (!state_->alive)
    throw InvalidArgument(
        "this communicator belonged to a twinccl.run that has returned: use it inside the rank "
        "function");
  throw InvalidArgument("communicator '" + comm_->name() + "' belongs to rank " +
                        std::to_string(state_->rank) + " but is used on " + this_thread_text() +
                        ": each rank uses the groups it made itself (new_group on its own thread)");
}

Comm current_world() {
  if (!current_rank && forked_from_rank >= 0)
    throw InvalidArgument("twinccl.distributed is used in " + this_thread_text() + kForkedAdvice);
  if (!current_rank)
    throw InvalidArgument(
        "twinccl.distributed is used outside a rank: call it inside the function given to "
        "twinccl.run(fn, world_size=...), on the rank's own thread (not a thread it started)");
  return Comm(current_rank, current_rank->world);
}

CurrentRank::CurrentRank(std::shared_ptr<RankState> state) { current_rank = std::move(state); }
CurrentRank::~CurrentRank() { current_rank.reset(); }

PyWork::PyWork(Work work, std::function<void()> finish)
    : owner_(current_rank), work_(std::move(work)), finish_(std::move(finish)) {}

void PyWork::check_thread() const {
  if (owner_ && owner_->alive && current_rank != owner_)
    throw InvalidArgument("this Work belongs to rank " + std::to_string(owner_->rank) +
                          ", which issued its operation, but is waited on by " +
                          this_thread_text() +
                          ": only the issuing rank waits on its Works (the others wait on their "
                          "own)");
}

void PyWork::finish_once() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (finish_) finish_();
}

namespace {

// torch's Work.wait(timeout): a datetime.timedelta (0, torch's "the group's default": no limit
// here) or, as a convenience, a number of seconds; None = no limit. -1 means no limit.
double timeout_seconds(const py::object& timeout) {
  if (timeout.is_none()) return -1;
  double seconds = 0;
  py::object timedelta = py::module_::import("datetime").attr("timedelta");
  if (py::isinstance(timeout, timedelta)) {
    seconds = timeout.attr("total_seconds")().cast<double>();
  } else if (!py::isinstance<py::bool_>(timeout) &&
             (py::isinstance<py::int_>(timeout) || py::isinstance<py::float_>(timeout))) {
    seconds = timeout.cast<double>();
  } else {
    throw InvalidArgument(
        "Work.wait: timeout must be a datetime.timedelta or a number of "
        "seconds, got " +
        py::repr(timeout).cast<std::string>().substr(0, 80));
  }
  if (std::isnan(seconds) || seconds < 0) {
    throw InvalidArgument("Work.wait: timeout=" + py::repr(timeout).cast<std::string>() +
                          " must be >= 0 seconds (0 or None: no limit)");
  }
  return seconds == 0 ? -1 : seconds;
}

}  // namespace

bool PyWork::wait(const py::object& timeout) {
  check_thread();
  const double seconds = timeout_seconds(timeout);
  bool done = true;
  {
    BlockingCall nogil;  // gives up the rank baton too (rank_baton.h)
    if (seconds >= 0) done = work_.wait_for(std::chrono::duration<double>(seconds));
    if (done) {
      work_.wait();
      finish_once();
    }
  }
  release_dropped_arrays();
  if (!done) {
    throw TimeoutError("Work.wait: the operation did not complete within timeout=" +
                       py::repr(timeout).cast<std::string>() +
                       " (it goes on: wait again, or without a timeout)");
  }
  return true;
}

bool PyWork::is_completed() {
  BlockingCall nogil;  // gives up the rank baton too (rank_baton.h)
  // A failed operation counts as completed (torch); wait() raises its error.
  if (!work_.test()) return false;
  try {
    work_.wait();
    finish_once();
  } catch (const Error&) {
  }
  return true;
}

py::object issue(bool async_op, const std::function<Work()>& call, std::function<void()> finish) {
  release_dropped_arrays();
  std::optional<Work> work;
  {
    BlockingCall nogil;  // gives up the rank baton too (rank_baton.h)
    work = call();
    if (!async_op) {
      work->wait();
      if (finish) finish();
    }
  }
  if (!async_op) return py::none();
  return py::cast(std::make_unique<PyWork>(std::move(*work), std::move(finish)));
}

py::object issue_queued(bool async_op, const std::function<Work()>& call) {
  if (!async_op) return issue(false, call);
  release_dropped_arrays();
  return py::cast(std::make_unique<PyWork>(call(), std::function<void()>()));
}

namespace {
// A communicator made from `c` (split, subcommunicator), kept by the rank until its run ends; None
// for no communicator (split's kNoColor).
py::object kept(const Comm& c, std::unique_ptr<Communicator> child) {
  if (!child) return py::none();
  Communicator* raw = child.get();
  c.state().groups.push_back(std::move(child));
  return py::cast(Comm(c.shared_state(), raw));
}
}  // namespace

void bind_comm(py::module_& m) {
  pthread_atfork(nullptr, nullptr, &forget_rank_in_child);
  py::class_<PyWork>(m, "Work", "The handle of an asynchronous operation (torch's Work).")
      .def("wait", &PyWork::wait, py::arg("timeout") = py::none(),
           "Blocks until the operation completed (True); raises its error. timeout: a "
           "datetime.timedelta or seconds (torch's; 0 or None: no limit): TimeoutError when the "
           "operation is still running then.")
      .def("is_completed", &PyWork::is_completed, "True once the operation finished.");

  py::class_<Comm> comm(m, "Comm", "One rank's communicator (the world or a group).");
  comm.def_property_readonly("rank", [](const Comm& c) { return c.get().rank(); })
      .def_property_readonly("size", [](const Comm& c) { return c.get().size(); })
      .def_property_readonly("name", [](const Comm& c) { return c.get().name(); })
      .def(
          "split",
          [](const Comm& c, int color, int key, const std::string& name, const std::string& file,
             unsigned line) -> py::object {
            const Where where = python_call_site(file, line);
            std::unique_ptr<Communicator> child;
            {
              BlockingCall nogil;  // gives up the rank baton too (rank_baton.h)
              child = c.get().split(color, key, name, where);
            }
            return kept(c, std::move(child));
          },
          py::arg("color"), py::arg("key"), py::arg("name"), py::arg("file"), py::arg("line"))
      .def(
          "subcommunicator",
          [](const Comm& c, const std::vector<int>& ranks, const std::string& name,
             const std::string& file, unsigned line) -> py::object {
            const Where where = python_call_site(file, line);
            std::unique_ptr<Communicator> child;
            {
              BlockingCall nogil;  // gives up the rank baton too (rank_baton.h)
              child = c.get().subcommunicator(ranks, name, where);
            }
            return kept(c, std::move(child));
          },
          py::arg("ranks"), py::arg("name"), py::arg("file"), py::arg("line"),
          "A communicator of `ranks` (ranks of this one, in the new one's order) made by those "
          "ranks only: every member calls it with the same ranks and name, no other rank does.")
      .def(
          "compute",
          [](const Comm& c, double seconds, double flops) {
            // The trace's bounds for one compute event (a replay refuses more).
            if (!(seconds >= 0.0 && seconds <= trace::kMaxComputeSeconds) ||
                !(flops >= 0.0 && flops <= trace::kMaxComputeFlops))
              throw InvalidArgument(
                  "twinccl.compute: seconds=" + std::to_string(seconds) +
                  " and flops=" + std::to_string(flops) + " must be >= 0, seconds at most " +
                  std::to_string(trace::kMaxComputeSeconds) + " and flops at most 1e21 per call");
            if (seconds > 0.0) c.get().compute(seconds);
            if (flops > 0.0) c.get().compute_flops(flops);
          },
          py::arg("seconds"), py::arg("flops"))
      .def(
          "set_wait_timeout",
          [](const Comm& c, double seconds, const std::string& source) {
            set_wait_timeout(c.get(), seconds, source);
            // A rank waiting for its turn to run Python waits as long (rank_baton.h).
            if (RankBaton* baton = RankBaton::of_this_thread())
              baton->allow_turn_wait(seconds, source);
          },
          py::arg("seconds"), py::arg("source"),
          "This rank waits at most `seconds` for its peers in this communicator's operations "
          "issued from now on (TimeoutError naming `source`), instead of twinccl.run's timeout_s.");
  m.def("_world", &current_world, "This rank's world communicator (inside twinccl.run).");
  bind_collectives(comm);
  bind_mindspore(comm);
}

}  // namespace twinccl::python
