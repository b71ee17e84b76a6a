// rank_baton.h: one rank runs Python at a time; its process state is swapped in when it arrives.
#include "rank_baton.h"

#include <poll.h>
#include <pthread.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "twinccl/errors.h"

namespace py = pybind11;

namespace twinccl::python {
namespace {
thread_local RankBaton* this_thread_baton = nullptr;
thread_local int this_thread_rank = -1;

// A process forked from a rank thread (a DataLoader worker started with fork) holds that thread
// alone: the other ranks, which would hand the turn back, are not in it. There the rank runs as a
// plain process (before, time.sleep in a DataLoader worker's Dataset waited for the turn forever).
void forget_turns_in_child() {
  this_thread_baton = nullptr;
  this_thread_rank = -1;
}

// poll(2) for input on `fds` for up to `ms`: > 0 when one is readable, closed or invalid, 0 when
// the time is up or a signal cut it short.
int poll_input(const std::vector<int>& fds, int ms) {
  std::vector<pollfd> polled;
  polled.reserve(fds.size());
  for (int fd : fds) polled.push_back(pollfd{fd, POLLIN, 0});
  const int ready = ::poll(polled.data(), static_cast<nfds_t>(polled.size()), ms);
  if (ready < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "poll");
  return ready < 0 ? 0 : ready;
}
// Hand-overs since the process started, for the tests and benchmarks (GIL held: no race).
std::uint64_t fast_hand_overs = 0;    // installed by RankSlots alone
std::uint64_t python_hand_overs = 0;  // by _rank_state.py's swap

// How long a rank waits for its turn before it says on stderr who holds the baton (once per
// wait): a holder that waits in Python for another rank (a threading.Event set by it) would wait
// forever, since that rank never gets its turn.
constexpr std::chrono::duration<double> kTellAfter(5.0);

// How many times a swap cut by asynchronous exceptions is resumed before it counts as failed.
constexpr int kMaxSwapAttempts = 1000;

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}
}  // namespace

RankBaton::RankBaton(py::function swap, double timeout_s)
    : swap_(std::move(swap)), timeout_s_(timeout_s) {}

void RankBaton::allow_turn_wait(double seconds, const std::string& source) {
  std::lock_guard<std::mutex> lock(mu_);
  if (seconds <= timeout_s_) return;
  timeout_s_ = seconds;
  timeout_source_ = source;
}

std::string RankBaton::stop_reason() {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_reason_;
}

RankBaton* RankBaton::of_this_thread() { return this_thread_baton; }
int RankBaton::rank_of_this_thread() { return this_thread_rank; }

void RankBaton::wait_for_turn(int rank) {
  std::unique_lock<std::mutex> lock(mu_);
  if (holder_ == -1 && queue_.empty()) {
    holder_ = rank;
    held_since_ = std::chrono::steady_clock::now();
    return;
  }
  Waiter me;
  me.rank = rank;
  queue_.push_back(&me);
  const auto since = std::chrono::steady_clock::now();
  bool told = false;
  while (!me.granted) {
    if (me.wake.wait_for(lock, std::chrono::milliseconds(50)) == std::cv_status::no_timeout ||
        me.granted || holder_ == -1)
      continue;
    const auto now = std::chrono::steady_clock::now();
    const double waited_s = std::chrono::duration<double>(now - since).count();
    const double held_s = std::chrono::duration<double>(now - held_since_).count();
    const std::string why =
        "rank " + std::to_string(rank) + " waited " + seconds_text(waited_s) +
        " for its turn to run Python: rank " + std::to_string(holder_) + " has run Python for " +
        seconds_text(held_s) +
        " without a TwinCCL call (ranks take turns, each with its own process state; a rank "
        "that waits in Python for another rank, e.g. on a threading.Event, waits forever: use "
        "twinccl.distributed, or twinccl.run(rank_state=\"shared\"))";
    if (waited_s > timeout_s_ && stop_reason_.empty()) {
      // The run is stopped (run_world asks stop_reason() every 50 ms): the holder's next TwinCCL
      // call raises, and it gives the baton up. This rank goes on waiting for it.
      stop_reason_ =
          (timeout_source_.empty()
               ? "twinccl.run: timeout_s=" + seconds_text(timeout_s_)
               : "twinccl.run: the longest wait timeout the script set, " + timeout_source_ + ",") +
          " exceeded: " + why;
    } else if (!told && waited_s > kTellAfter.count()) {
      told = true;
      std::fprintf(stderr, "twinccl.run: %s\n", why.c_str());
    }
  }
  // give_up() made this rank the holder and took it off the queue.
}

int RankBaton::holder() {
  std::lock_guard<std::mutex> lock(mu_);
  return holder_;
}

void RankBaton::give_up(int rank) {
  std::lock_guard<std::mutex> lock(mu_);
  if (holder_ != rank) return;
  if (queue_.empty()) {
    holder_ = -1;
    return;
  }
  // Straight to the first waiter, woken alone. Notified under the lock: the waiter's Waiter lives
  // on its stack and is gone as soon as it sees `granted` (it cannot before we unlock).
  Waiter* next = queue_.front();
  queue_.pop_front();
  holder_ = next->rank;
  held_since_ = std::chrono::steady_clock::now();
  next->granted = true;
  next->wake.notify_one();
}

void RankBaton::install(int rank) {
  if (!failed_.empty())
    throw InternalError("twinccl.run: rank " + std::to_string(rank) +
                        " cannot run Python with its own process state: " + failed_);
  if (installed_ == rank) return;
  const int leaving = installed_;
  installed_ = rank;
  std::optional<py::error_already_set> cut;
  try {
    if (slots_.try_fast_swap(leaving, rank)) {
      ++fast_hand_overs;
      return;
    }
    cut = python_swap(leaving, rank);
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_Exception))
      failed_ = "swapping from rank " + std::to_string(leaving) + "'s state failed: " + e.what();
    throw;
  }
  if (cut) throw std::move(*cut);  // the state is whole: the interruption goes on
}

std::optional<py::error_already_set> RankBaton::python_swap(int leaving, int arriving) {
  ++python_hand_overs;
  ++swap_serial_;
  slots_.save(leaving);
  // An asynchronous exception (a KeyboardInterrupt relayed into this thread, Ctrl-C on the main
  // thread, the AbortedError of a stopped run's ranks still in Python) can cut the swap between any
  // two bytecodes, even before its first line: it is called again with the same serial and goes on
  // from where it was (_rank_state.py), until the state is whole; the first such exception is
  // returned, for the caller to raise. Cut and left, the caller of an interrupted run kept a rank's
  // os.environ, logging settings...
  std::optional<py::error_already_set> interrupted;
  py::object spec;
  for (int attempt = 0;; ++attempt) {
    try {
      spec = swap_(leaving, arriving, swap_serial_);
      break;
    } catch (py::error_already_set& e) {
      // An error of the swap itself, or interruptions that never end: the caller's install()
      // records the failure; the arriving rank's newest slot values go in place all the same.
      const bool cut = !e.matches(PyExc_Exception) || py::hasattr(e.type(), "_twinccl_stopped");
      if (!cut || attempt >= kMaxSwapAttempts) {
        slots_.after_python_swap(arriving, py::make_tuple(false, py::list()));
        throw;
      }
      if (!interrupted) interrupted.emplace(std::move(e));
    }
  }
  slots_.after_python_swap(arriving, spec);
  return interrupted;
}

void RankBaton::throw_stopped(const std::string& what, int rank) const {
  throw AbortedError(what + " on rank " + std::to_string(rank) +
                     " was cut short: the run stopped (" + sleepers_stopped_ + ")");
}

void RankBaton::sleep(int rank, double seconds) {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {  // in waits of an hour at most: a clock's time point holds ~292 years
    const double left_s =
        seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (left_s <= 0.0) return;
    if (sleepers_.wait_for(lock, std::chrono::duration<double>(std::min(left_s, 3600.0)),
                           [this] { return !sleepers_stopped_.empty(); }))
      throw_stopped("time.sleep", rank);
  }
}

bool RankBaton::wait_readable(int rank, const std::vector<int>& fds, double seconds) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!sleepers_stopped_.empty())
        throw_stopped("a wait for a multiprocessing Queue or Pipe", rank);
    }
    const double left_s =
        seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (poll_input(fds, static_cast<int>(std::clamp(std::ceil(left_s * 1000.0), 0.0, 50.0))) > 0)
      return true;
    if (left_s <= 0.0) return false;
  }
}

void RankBaton::stop_sleepers(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!sleepers_stopped_.empty()) return;
    sleepers_stopped_ = why.empty() ? std::string("stopped") : why;
  }
  sleepers_.notify_all();
}

void RankBaton::give_back_to_caller() {
  if (installed_ == -1) return;
  const int leaving = installed_;
  installed_ = -1;
  if (auto cut = python_swap(leaving, -1)) throw std::move(*cut);
}

RankTurn::RankTurn(RankBaton* baton, int rank) : baton_(baton), rank_(rank) {
  if (!baton_) return;
  this_thread_baton = baton_;
  this_thread_rank = rank_;
  baton_->wait_for_turn(rank_);
}

RankTurn::~RankTurn() {
  if (!baton_) return;
  baton_->give_up(rank_);
  this_thread_baton = nullptr;
  this_thread_rank = -1;
}

void RankTurn::arrived() {
  if (baton_) baton_->install(rank_);
}

BlockingCall::BlockingCall() : baton_(this_thread_baton), rank_(this_thread_rank) {
  if (baton_ && !baton_->failed_.empty()) baton_->install(rank_);  // raises the swap's failure
  // The GIL before the baton: the rank woken by give_up() then finds the GIL free (one wake per
  // hand-over instead of two: for the baton, then for the GIL).
  saved_ = PyEval_SaveThread();
  if (baton_) baton_->give_up(rank_);
}

BlockingCall::~BlockingCall() {
  if (baton_) baton_->wait_for_turn(rank_);
  PyEval_RestoreThread(saved_);
  if (!baton_) return;
  try {
    baton_->install(rank_);
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_Exception) || py::hasattr(e.type(), "_twinccl_stopped")) {
      // KeyboardInterrupt (Ctrl-C: py_interrupt.h), or the AbortedError that stops a run's ranks
      // still in Python code (RunInterrupts::stop_ranks_in_python), landed in the swap, which
      // finished it anyway: it is raised in the rank's own code, at its next line.
      PyThreadState_SetAsyncExc(PyThread_get_thread_ident(), e.type().ptr());
    } else {
      // A destructor cannot raise: the error is shown, and the rank's next TwinCCL call and the
      // run's end raise InternalError naming it (failed()).
      e.restore();
      PyErr_WriteUnraisable(nullptr);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "twinccl.run: %s\n", e.what());  // raised again by the next call
  }
}

void bind_rank_baton(py::module_& m) {
  pthread_atfork(nullptr, nullptr, &forget_turns_in_child);
  m.def(
      "_dict_versions",
      [](const py::args& objects) -> py::object {
#if PY_VERSION_HEX >= 0x030C0000
        return py::none();  // ma_version_tag is deprecated from 3.12: the parts copy every time
#else
        py::tuple out(objects.size());
        for (std::size_t i = 0; i < objects.size(); ++i) {
          PyObject* o = objects[i].ptr();
          PyObject* dict = nullptr;
          if (PyDict_Check(o))
            dict = o;
          else if (PyModule_Check(o))
            dict = PyModule_GetDict(o);
          else if (PyType_Check(o))
            dict = reinterpret_cast<PyTypeObject*>(o)->tp_dict;
          else if (o != Py_None)
            throw py::type_error("_dict_versions: a dict, module, class or None");
          const unsigned long long version =
              dict ? reinterpret_cast<PyDictObject*>(dict)->ma_version_tag : 0;
          out[i] = py::int_(version);
        }
        return out;
#endif
      },
      "The version tags of dicts (a module's, a class's namespace): CPython gives a dict a new, "
      "never reused tag at every change, so an equal tag means unchanged (the rank state's dirty "
      "check). None where this CPython has no such tag.");
  m.def(
      "_hand_overs", [] { return py::make_tuple(fast_hand_overs, python_hand_overs); },
      "(hand-overs done by the rank slots alone, by _rank_state's swap) since the process "
      "started (rank_slots.h).");
  m.def(
      "_takes_turns", [] { return this_thread_baton != nullptr; },
      "True on a rank thread of a twinccl.run whose ranks take turns (rank_state=\"isolated\").");
  m.def(
      "_sleep_off_turn",
      [](double seconds) {
        if (!(seconds >= 0.0) || std::isinf(seconds))
          throw py::value_error("sleep length must be non-negative and finite");
        RankBaton* baton = RankBaton::of_this_thread();
        const int rank = RankBaton::rank_of_this_thread();
        BlockingCall off_turn;
        if (baton)
          baton->sleep(rank, seconds);
        else
          std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
      },
      py::arg("seconds"), "time.sleep that gives up the rank's turn while it sleeps.");
  m.def(
      "_wait_readable_off_turn",
      [](const std::vector<int>& fds, double seconds) {
        if (!(seconds >= 0.0) || std::isinf(seconds))
          throw py::value_error("wait length must be non-negative and finite");
        if (fds.empty() || fds.size() > 4096)
          throw py::value_error("1 to 4096 file descriptors, got " + std::to_string(fds.size()));
        for (int fd : fds)
          if (fd < 0)
            throw py::value_error("file descriptor " + std::to_string(fd) + " is negative");
        RankBaton* baton = RankBaton::of_this_thread();
        const int rank = RankBaton::rank_of_this_thread();
        BlockingCall off_turn;
        if (baton) return baton->wait_readable(rank, fds, seconds);
        return poll_input(fds, static_cast<int>(std::min(std::ceil(seconds * 1000.0), 2.0e9))) > 0;
      },
      py::arg("fds"), py::arg("seconds"),
      "Waits up to `seconds` for input on the file descriptors `fds` with the rank's turn given up "
      "(a stopped run ends the wait with AbortedError); True when one is readable or closed.");
}

}  // namespace twinccl::python
