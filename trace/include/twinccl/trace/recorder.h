// Recording traces of a running program: an observer of Communicator::issue (call_observer.h)
// writes one TraceOp per call, its waits, groups, split communicators and declared compute into a
// TraceRecorder (docs/traces.md). Each call is checked once, by issue(); nothing is added to the
// program's communication (a split's members come from the ranks' own colors and keys).
//
//   trace::TraceRecorder recorder(8);                     // one per world
//   twinccl::run(options, [&](Communicator& world) {
//     recorder.record(world);                             // this rank's calls, from now on
//     world.all_reduce(x, x); world.compute(1e-3);        // op + wait, then 1 ms of compute
//   });
//   trace::save(recorder.trace(), "step.trace.json");
//
// The emulator attaches one per world when TWINCCL_TOPOLOGY or TWINCCL_TRACE is set. Groups and
// splits are recorded on both backends (each reports them to observers).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "twinccl/communicator.h"
#include "twinccl/trace/trace.h"

namespace twinccl::trace {

struct TraceRecorderOptions {
  std::string program;  // free text stored in the trace
  // > 0: wall time a rank spends between TwinCCL calls, times this factor, is recorded as compute
  // when the rank declared none in between (measured compute). 0: only declared compute.
  double measured_compute_scale = 0.0;
  bool p2p_per_peer_streams = false;  // stored in the trace: how the run ordered send/recv
};

// Thread-safe: every rank thread records into the same recorder.
class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;
  explicit TraceRecorder(int world_size, TraceRecorderOptions options = {});

  // Observes `comm` (and the communicators split from it) from now on. `world_ranks`: the world
  // rank of each rank of comm (empty = comm is the world).
  void record(Communicator& comm, std::vector<int> world_ranks = {});

  // What the observer calls; usable directly. The rank (a world rank) issued `op` on `comm`
  // (comm.ranks lists world ranks); op.comm and op.seq are filled here (collectives: numbered per
  // rank and communicator; send/recv: per pair and direction). Returns the op's id on that rank.
  int record_op(int rank, const TraceCommunicator& comm, TraceOp op);
  // The rank blocked on op `op` and got it back now; `began` is when it started waiting (for
  // measured compute: the time before it counts, the time blocked does not). A blocking call is
  // record_op then record_wait(began = issue time).
  void record_wait(int rank, int op, std::optional<Clock::time_point> began = {});
  // The operation completed (informational: kept as complete_s).
  void record_complete(int rank, int op);
  void record_compute(int rank, double seconds);
  void record_compute_flops(int rank, double flops);
  // A new id for the ops of one group_start/group_end on `rank`.
  int open_group(int rank);
  // The rank (comm rank `comm_rank` of `comm`) passed split(color, key) as its `ordinal`-th split
  // of comm. split_members: the world ranks of the child of `color`, ordered by (key, comm rank);
  // InvalidArgument when a rank of comm has not told its color yet (it is not recorded).
  void record_split(const TraceCommunicator& comm, int ordinal, int comm_rank, int color, int key);
  std::vector<int> split_members(const TraceCommunicator& comm, int ordinal, int color) const;

  int world_size() const { return static_cast<int>(last_call_.size()); }
  // A copy of everything recorded so far.
  Trace trace() const;

 private:
  double since_start_s(Clock::time_point t) const;
  void measured_gap(int rank, Clock::time_point until);  // holds mu_
  int comm_index(const TraceCommunicator& comm);         // holds mu_
  void check_rank(int rank, const char* what) const;

  TraceRecorderOptions options_;
  Clock::time_point start_;
  mutable std::mutex mu_;
  Trace trace_;
  std::map<std::pair<std::string, std::vector<int>>, int> comms_;
  std::vector<Clock::time_point> last_call_;
  std::vector<char> declared_since_call_;
  std::vector<int> next_group_;
  std::vector<std::map<int, std::uint64_t>> collective_seq_;  // per rank: comm -> next
  std::vector<std::map<std::tuple<int, int, int, bool>, std::uint64_t>>
      p2p_seq_;  // (comm, src, dst, send)
  // (comm name, world ranks, ordinal) -> comm rank -> (color, key)
  std::map<std::tuple<std::string, std::vector<int>, int>, std::map<int, std::pair<int, int>>>
      splits_;
};

}  // namespace twinccl::trace
