// Recording traces of a running program (the data model and file format are trace::Trace,
// twinccl/sim/replay_trace.h; docs/traces.md).
//
//   emu::TraceRecorder recorder(8);                       // one per emulated world
//   twinccl::run(options, [&](Communicator& world) {
//     emu::TracingCommunicator comm(world, recorder);     // records every call of this rank
//     comm.all_reduce(x, x); comm.compute(1e-3);          // op + wait, then 1 ms of compute
//   });
//   sim::save_trace(recorder.trace(), "step.trace.json");
//
// The emulator's own hook (one recorder per world when TWINCCL_TOPOLOGY or TWINCCL_TRACE is set)
// calls the same record_* functions; TracingCommunicator is the same thing as a wrapper, usable
// on any backend.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "twinccl/communicator.h"
#include "twinccl/trace/trace.h"

namespace twinccl::emu {

struct TraceRecorderOptions {
  std::string program;  // free text stored in the trace
  // > 0: wall time a rank spends between TwinCCL calls, times this factor, is recorded as compute
  // when the rank declared none in between (measured compute). 0: only declared compute.
  double measured_compute_scale = 0.0;
};

// What record_op needs to know about one call.
struct TracedCall {
  std::string comm_name;         // "world", "dp", ...
  std::vector<int> comm_ranks;   // world rank of each comm rank
  std::int64_t seq = -1;         // collectives: the comm's number (-1 = counted here, per comm)
  OpKind kind = OpKind::all_reduce;
  std::size_t count = 0;
  DataType dtype = DataType::float32;
  int root = -1, peer = -1;      // comm ranks
  std::vector<std::size_t> counts;
  std::string algorithm;
  bool async = false;
  int group = 0;                 // > 0: the id open_group() returned
};

// Thread-safe: every rank thread records into the same recorder.
class TraceRecorder {
 public:
  using Clock = std::chrono::steady_clock;
  explicit TraceRecorder(int world_size, TraceRecorderOptions options = {});

  // The rank issued an operation; returns its id on that rank (for record_wait/record_complete).
  int record_op(int rank, const TracedCall& call);
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

  // A copy of everything recorded so far.
  trace::Trace trace() const;

 private:
  double since_start_s(Clock::time_point t) const;
  void measured_gap(int rank, Clock::time_point until);  // holds mu_
  int comm_index(const TracedCall& call);                 // holds mu_
  void check_rank(int rank, const char* what) const;

  TraceRecorderOptions options_;
  Clock::time_point start_;
  mutable std::mutex mu_;
  trace::Trace trace_;
  std::map<std::pair<std::string, std::vector<int>>, int> comms_;
  std::vector<Clock::time_point> last_call_;
  std::vector<char> declared_since_call_;
  std::vector<int> next_group_;
  std::vector<std::map<int, std::uint64_t>> collective_seq_;                // per rank: comm -> next
  std::vector<std::map<std::tuple<int, int, int, bool>, std::uint64_t>> p2p_seq_;  // (comm, src, dst, send)
};

// A Communicator that forwards every call to `inner` and records it (ops, waits, groups, split
// communicators, declared compute). One per rank; splits return TracingCommunicators too.
class TracingCommunicator final : public Communicator {
 public:
  // `world_ranks`: the world rank of each rank of `inner` (empty = inner is the world).
  TracingCommunicator(Communicator& inner, TraceRecorder& recorder, std::vector<int> world_ranks = {});
  TracingCommunicator(std::unique_ptr<Communicator> owned, TraceRecorder& recorder, std::vector<int> world_ranks);

  int rank() const override { return inner_.rank(); }
  int size() const override { return inner_.size(); }
  const std::string& name() const override { return inner_.name(); }
  std::string_view backend() const override { return inner_.backend(); }
  Buffer alloc(std::size_t count, DataType dtype) override { return inner_.alloc(count, dtype); }
  void group_start(Where where = Where::current()) override;
  Work group_end(CallOptions opts = {}, Where where = Where::current()) override;
  void group_abort(Where where = Where::current()) noexcept override;
  std::unique_ptr<Communicator> split(int color, int key, std::string name = {},
                                      Where where = Where::current()) override;
  void compute(double seconds) override;
  void compute_flops(double flops) override;
  void rejected(const OpDesc& op, const std::string& message) noexcept override { inner_.rejected(op, message); }

 protected:
  Work submit(OpDesc op) override;

 private:
  int world_rank() const { return world_ranks_[static_cast<std::size_t>(inner_.rank())]; }

  std::unique_ptr<Communicator> owned_;
  Communicator& inner_;
  TraceRecorder& recorder_;
  std::vector<int> world_ranks_;
  int group_depth_ = 0;
  int group_ = 0;
  std::vector<int> group_ops_;
};

}  // namespace twinccl::emu
