// What Python holds of a rank: its communicators (the world and the groups it made) and the Works
// of its asynchronous calls. twinccl.run() makes one RankState per rank thread; twinccl.distributed
// reaches it through current_world().
//
//   Comm& world = current_world();              // inside twinccl.run's rank function
//   Work w = world.get().barrier({.async_op = true}, where);
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "twinccl/communicator.h"

namespace twinccl::python {

// One rank of a twinccl.run: its world communicator and the groups split from it. The groups are
// destroyed when the rank function returns (close()); a Comm used after that raises
// InvalidArgument instead of touching a dead communicator.
struct RankState {
  explicit RankState(Communicator& w) : world(&w), rank(w.rank()) {}
  void close();  // without the GIL: destroying a communicator may wait for its stream
  Communicator* world;
  int rank;  // the world rank (for messages on other threads)
  std::vector<std::unique_ptr<Communicator>> groups;
  std::atomic<bool> alive{true};  // read by other threads that were handed this rank's objects
};

// A communicator as Python sees it (twinccl.distributed's groups). Only its rank's own thread may
// use it: another rank's thread (a group object shared through a closure), or a thread the rank
// started, gets InvalidArgument instead of racing the owner on its communicator.
class Comm {
 public:
  Comm(std::shared_ptr<RankState> state, Communicator* comm)
      : state_(std::move(state)), comm_(comm) {}
  // The communicator; InvalidArgument once its twinccl.run returned, or on another thread.
  Communicator& get() const;
  RankState& state() const { return *state_; }
  const std::shared_ptr<RankState>& shared_state() const { return state_; }

 private:
  std::shared_ptr<RankState> state_;
  Communicator* comm_;
};

// The world of the rank running on this thread (twinccl.run); InvalidArgument elsewhere.
Comm current_world();
// Sets this thread's rank for the scope of a rank function.
class CurrentRank {
 public:
  explicit CurrentRank(std::shared_ptr<RankState> state);
  ~CurrentRank();
  CurrentRank(const CurrentRank&) = delete;
  CurrentRank& operator=(const CurrentRank&) = delete;
};

// torch's Work: wait() (the GIL released while waiting), is_completed(). `finish` runs once after
// the operation completed (copies out of a staging buffer: gather), on the thread that notices.
// While its run lasts, only the rank that issued the operation may wait on it (another rank's
// wait would block outside what the deadlock checker sees): InvalidArgument elsewhere.
class PyWork {
 public:
  explicit PyWork(Work work, std::function<void()> finish = {});
  bool wait(const pybind11::object& timeout);  // torch's wait(timeout): True, or TimeoutError
  bool is_completed();

 private:
  void finish_once();  // holds nothing; guarded by mu_
  void check_thread() const;
  std::shared_ptr<RankState> owner_;  // the issuing rank (none outside a run)
  Work work_;
  std::function<void()> finish_;
  std::mutex mu_;
  bool finished_ = false;
};

// Runs `call` (which issues one operation) with the GIL released. Blocking calls (async_op false)
// also wait there and return None; asynchronous ones return a PyWork.
pybind11::object issue(bool async_op, const std::function<Work()>& call,
                       std::function<void()> finish = {});
// As issue(), for a call that only queues one core operation when asynchronous (all_reduce,
// broadcast, reduce, all_gather_into_tensor, reduce_scatter_tensor: it never waits for a peer):
// issued with the GIL and the rank baton kept, so the rank goes on without a hand-over (torch's
// backend issues every call so, and waits on the Work).
pybind11::object issue_queued(bool async_op, const std::function<Work()>& call);

// Registers Comm, PyWork and the groups (py_comm.cc) and the collectives (py_collectives.cc) on
// `m`.
void bind_comm(pybind11::module_& m);
void bind_collectives(pybind11::class_<Comm>& comm);
void bind_mindspore(pybind11::class_<Comm>& comm);  // py_mindspore.cc

}  // namespace twinccl::python
