// rank_baton.h: one rank runs Python at a time; its process state is swapped in when it arrives.
#include "rank_baton.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>

#include "twinccl/errors.h"

namespace py = pybind11;

namespace twinccl::python {
namespace {
thread_local RankBaton* this_thread_baton = nullptr;
thread_local int this_thread_rank = -1;

// How long a rank waits for its turn before it says on stderr who holds the baton (once per
// wait): a holder that waits in Python for another rank (a threading.Event set by it) would wait
// forever, since that rank never gets its turn.
constexpr std::chrono::duration<double> kTellAfter(5.0);

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}
}  // namespace

RankBaton::RankBaton(py::function swap, double timeout_s)
    : swap_(std::move(swap)), timeout_s_(timeout_s) {}

std::string RankBaton::stop_reason() {
  std::lock_guard<std::mutex> lock(mu_);
  return stop_reason_;
}

RankBaton* RankBaton::of_this_thread() { return this_thread_baton; }
int RankBaton::rank_of_this_thread() { return this_thread_rank; }

void RankBaton::wait_for_turn(int rank) {
  std::unique_lock<std::mutex> lock(mu_);
  queue_.push_back(rank);
  const auto since = std::chrono::steady_clock::now();
  bool told = false;
  while (holder_ != -1 || queue_.front() != rank) {
    if (turn_.wait_for(lock, std::chrono::milliseconds(50)) == std::cv_status::no_timeout ||
        holder_ == -1)
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
      stop_reason_ = "twinccl.run: timeout_s=" + seconds_text(timeout_s_) + " exceeded: " + why;
    } else if (!told && waited_s > kTellAfter.count()) {
      told = true;
      std::fprintf(stderr, "twinccl.run: %s\n", why.c_str());
    }
  }
  queue_.pop_front();
  holder_ = rank;
  held_since_ = std::chrono::steady_clock::now();
}

void RankBaton::give_up(int rank) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (holder_ != rank) return;
    holder_ = -1;
  }
  turn_.notify_all();
}

void RankBaton::install(int rank) {
  if (!failed_.empty())
    throw InternalError("twinccl.run: rank " + std::to_string(rank) +
                        " cannot run Python with its own process state: " + failed_);
  if (installed_ == rank) return;
  const int leaving = installed_;
  installed_ = rank;
  try {
    swap_(leaving, rank);
  } catch (py::error_already_set& e) {
    // A KeyboardInterrupt sent into the swap is raised after it (swap() finishes first).
    if (e.matches(PyExc_Exception))
      failed_ = "swapping from rank " + std::to_string(leaving) + "'s state failed: " + e.what();
    throw;
  }
}

void RankBaton::give_back_to_caller() {
  if (installed_ == -1) return;
  const int leaving = installed_;
  installed_ = -1;
  swap_(leaving, -1);
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
  if (baton_) {
    if (!baton_->failed_.empty()) baton_->install(rank_);  // raises the swap's failure
    baton_->give_up(rank_);
  }
  saved_ = PyEval_SaveThread();
}

BlockingCall::~BlockingCall() {
  if (baton_) baton_->wait_for_turn(rank_);
  PyEval_RestoreThread(saved_);
  if (!baton_) return;
  try {
    baton_->install(rank_);
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_Exception)) {
      // KeyboardInterrupt (Ctrl-C: py_interrupt.h) landed in the swap, which finished it anyway:
      // it is raised in the rank's own code, at its next line.
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
  m.def(
      "_takes_turns", [] { return this_thread_baton != nullptr; },
      "True on a rank thread of a twinccl.run whose ranks take turns (rank_state=\"isolated\").");
  m.def(
      "_sleep_off_turn",
      [](double seconds) {
        if (!(seconds >= 0.0) || std::isinf(seconds))
          throw py::value_error("sleep length must be non-negative and finite");
        BlockingCall off_turn;
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
      },
      py::arg("seconds"), "time.sleep that gives up the rank's turn while it sleeps.");
}

}  // namespace twinccl::python
