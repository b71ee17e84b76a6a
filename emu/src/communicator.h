// The emulator's Communicator: one per rank thread; ranks of one communicator share a SharedComm
// (rendezvous for collectives, a pull exchange for send/recv). Calls run on the rank's Stream.
//
//   auto shared = std::make_shared<emu::SharedComm>(world, ranks, "world", config);
//   emu::EmuCommunicator comm(shared, rank);
//   comm.all_reduce(...);
//
// With checks on (CheckLevel::on, the default) every operation is recorded in the world's flight
// recorder, every lasting wait is shown to the deadlock checker, and async Works never waited on
// are reported when the rank's function returns (see docs/misuse.md).
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "comm_failure.h"
#include "departures.h"
#include "exchange.h"
#include "group_buffers.h"
#include "members_only.h"
#include "rendezvous.h"
#include "schedule_cache.h"
#include "single_user.h"
#include "stream.h"
#include "twinccl/algorithms.h"
#include "twinccl/communicator.h"
#include "twinccl/emu/emulator.h"
#include "wait_timeouts.h"
#include "work_state.h"
#include "world.h"

namespace twinccl::emu {

// The run's options (emulator.h), kept by each of its communicators: code that uses an option
// reads it here, so that adding one needs no copy from field to field (emu/src/option_table.cc).
using EmuConfig = EmulatorOptions;

inline AlgorithmParams params_of(const EmuConfig& c) {
  return {c.channels, c.chunk_elements, c.ranks_per_node};
}

struct SharedComm {
  SharedComm(std::shared_ptr<emu::World> world, std::vector<int> global_ranks, std::string name,
             EmuConfig config);
  std::shared_ptr<emu::World> world;
  std::vector<int> global_ranks;  // world rank of each rank of this communicator
  emu::Departures departures;     // ranks that destroyed their copy (splits only)
  std::string name;
  EmuConfig config;
  emu::WaitTimeouts wait_timeouts;  // each rank's own, when set (before the two that read them)
  emu::Rendezvous rendezvous;
  emu::Exchange p2p;                  // user send/recv
  emu::GroupBoard group_buffers;      // shared buffers across a group's collectives (checks on)
  emu::MembersOnly members_only;      // subcommunicators being made by their members
  emu::CommRecord* record = nullptr;  // the checker's view (nullptr with checks off)
  int size() const { return static_cast<int>(global_ranks.size()); }
};

class EmuCommunicator final : public Communicator {
 public:
  EmuCommunicator(std::shared_ptr<SharedComm> shared, int rank);
  ~EmuCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return shared_->size(); }
  const std::string& name() const override { return shared_->name; }
  std::string_view backend() const override { return "emu"; }
  // Non-empty when a group_start was never closed: the operations queued in it were not issued.
  std::string unclosed_group() const;

  const std::shared_ptr<emu::World>& world() const { return shared_->world; }
  int global_rank() const { return shared_->global_ranks[static_cast<std::size_t>(rank_)]; }

  // A split's communicator: once destroyed (and drained), peers waiting for this rank on it fail
  // at once (departures.h) instead of waiting for the timeout.
  void depart_on_destroy() {
    depart_.shared = shared_.get();  // (no temporary: its destructor would mark it at once)
    depart_.rank = rank_;
  }

  // This rank's waits in this communicator's operations: `timeout` instead of the world's.
  void set_wait_timeout(std::chrono::milliseconds timeout, std::string source) {
    shared_->wait_timeouts.set(rank_, timeout, std::move(source));
  }

  // A call of this rank failed its own checks: kept so that peers finding it returned learn why.
  void rejected(const OpDesc& op, const std::string& message) noexcept override;

 protected:
  Work submit(OpDesc op) override;
  Buffer do_alloc(std::size_t count, DataType dtype, std::size_t bytes) override;
  void do_group_start(Where where) override;
  Work do_group_end(const CallOptions& opts, Where where) override;
  // Discards the group's operations (never issued; its Work fails with AbortedError) once the
  // outermost level is closed; an enclosing group_end then throws InvalidArgument.
  bool do_group_abort(Where where) noexcept override;
  std::unique_ptr<Communicator> do_split(int color, int key, std::string name,
                                         Where where) override;
  std::unique_ptr<Communicator> do_subcommunicator(std::vector<int> ranks, int new_rank,
                                                   std::string name, Where where) override;

 private:
  struct Issued {
    OpDesc op;
    std::uint64_t seq = 0;       // collectives only
    std::uint64_t recorded = 0;  // flight recorder id (0: not recorded)
  };
  struct AsyncIssued {
    std::uint64_t task;
    std::string what;  // "all_reduce #3 (a.cc:10)"
  };
  // One stream of this rank and its checker bookkeeping (unused with CheckLevel::off): the
  // communicator's own, and with p2p_per_peer_streams one per (peer, direction) for send/recv
  // (p2p_lanes.cc). Tasks of one lane run in issue order; lanes progress independently.
  struct Lane {
    emu::Agent* agent = nullptr;
    std::uint64_t tasks_issued = 0;
    std::shared_ptr<emu::WaitedThrough> waited;
    std::deque<AsyncIssued> async_issued;
    std::weak_ptr<emu::EmuWork> last_work;
    emu::Stream stream;
  };
  // One meeting of this communicator's ranks named `call` (split, subcommunicator), run on its
  // stream after the work queued before it, and waited for: `with_meeting` runs on each rank once
  // every rank arrived, before they leave.
  void meet(std::string_view call, OpDesc& op, std::pair<int, int> split_arg,
            const std::function<void(emu::Meeting&)>& with_meeting);
  Work end_group_level(const CallOptions& opts, Where where);  // do_group_end's, holding user_
  void abort_group_level(Where where) noexcept;  // group_abort's work, the caller holding user_
  Work launch(Lane& lane, std::vector<Issued> ops, bool async_op,
              std::shared_ptr<emu::EmuWork> work = nullptr);
  // Completes a Work that runs nothing (an empty or discarded group) in stream order, with `error`.
  void finish_unlaunched(const std::shared_ptr<emu::EmuWork>& work, std::exception_ptr error);
  // Drops the open group's operations: flight recorder `failed`, collective numbers given back,
  // the group's Work completed with `error`.
  void discard_group(std::exception_ptr error);
  // A Work numbered as the lane's next task (first == nullptr: a group, named by `where`).
  std::shared_ptr<emu::EmuWork> new_work(Lane& lane, const OpDesc* first, std::uint64_t seq,
                                         Where where);
  void note_async(Lane& lane, const emu::EmuWork& work);
  // A blocking call on an idle stream runs on the caller's thread with no Work object, task or
  // allocation (false: the stream is busy, launch() queues it).
  bool run_blocking_inline(Lane& lane, std::span<const Issued> ops);
  // Runs a task's operations; `work` (nullptr: inline, no Work) is asked first whether it was
  // abandoned. Cancels them instead when this rank's communicator failed or the world aborted.
  void run_task(Lane& lane, std::span<const Issued> ops, bool async_op,
                emu::EmuWork* work = nullptr);
  // Cancelled operations: they touch no user memory; their peers learn `why`, which is rethrown.
  [[noreturn]] void cancel(std::span<const Issued> ops, const std::exception_ptr& why);
  // "all_reduce #3 on comm 'world' rank 1 (a.cc:10)", or a group of them.
  std::string ops_label(std::span<const Issued> ops) const;
  void run_group(Lane& lane, std::span<const Issued> ops);
  // A group of two or more collectives: no rank's output in one overlaps another rank's buffers
  // in another (group_buffers.h); throws InvalidArgument (and aborts the world) when one does.
  void check_group_collectives(std::span<const Issued> ops);
  void run_collective(Lane& lane, const OpDesc& op, std::uint64_t seq);
  // What this rank waits for on `lane` (the checker's view): `op` at `where`, with a peer (send,
  // recv) or a seq (a collective's, a send's message number).
  emu::WaitSite wait_site(const Lane& lane, emu::WaitKind kind, std::string_view op, Where where,
                          int peer, std::uint64_t seq) const;
  // p2p_lanes.cc (p2p_per_peer_streams): the lane of sends to / recvs from `peer`, created on
  // first use (a lone send/recv runs on it); a group's send/recv issued one per lane, its
  // collectives as one task on the communicator's stream, `work` done when all are.
  Lane& lane_for(int peer, bool sends);
  Work launch_split_group(std::vector<Issued> ops, bool async_op,
                          std::shared_ptr<emu::EmuWork> work);
  // `per_peer` (a p2p lane, named for messages): its worker ends when idle and counts against
  // EmuConfig::max_lane_threads.
  void prepare_lane(Lane& lane, emu::Agent* agent, std::string per_peer = {});
  // The last rank to arrive runs this collective for every rank (small, default algorithm, no
  // fault hook): see emu::lead_small_collective.
  bool leads(const OpDesc& op);
  std::string algorithm_for(const OpDesc& op);  // (asks the registry once per kind: cache_)
  void record_states(std::span<const Issued> ops, emu::OpState state);
  FaultAction fault(FaultStage stage, const OpDesc& op, std::uint64_t seq);
  std::string unwaited_message() const;
  // CheckLevel::debug: a recv of the group writing into a buffer a send of the group reads.
  void check_group_buffers(const std::vector<Issued>& ops) const;
  // A call from a second thread while another is inside (single_user.h): the rank's failure, and
  // the run aborts with `text` (the call already in flight may be paired with the wrong peers).
  void refuse_second_thread(const std::string& text) noexcept;
  // A call made on another rank's thread of this world (a communicator reached through shared
  // state) is refused: each rank makes its calls on its own communicators.
  void refuse_other_ranks_thread(std::string_view op, Where where);

  std::shared_ptr<SharedComm> shared_;
  int rank_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t p2p_issued_ = 0;
  int group_depth_ = 0;
  Where group_where_;
  std::vector<Issued> group_ops_;
  std::shared_ptr<emu::EmuWork> group_work_;
  std::string group_abandoned_;       // set when an exception left an inner Group scope: where
  emu::Agent* user_agent_ = nullptr;  // the checker's node for the rank's thread (or nullptr)
  std::shared_ptr<emu::CommFailure> failure_;  // this rank's error state on the communicator
  // Schedules and working memory of this rank's collectives, reused across calls (only
  // run_collective uses it: the communicator's stream runs them one at a time).
  emu::RankCache cache_;
  emu::SingleUser user_;  // one thread at a time: a call, or an open group
  // Destroyed after main_ and lanes_ (declared before them): marks the departure once drained.
  struct DepartOnDestroy {
    SharedComm* shared = nullptr;
    int rank = 0;
    ~DepartOnDestroy() {
      if (shared != nullptr) shared->departures.leave(rank);
    }
  } depart_;
  // Last members: destroyed (drained and joined) first. Keyed by peer * 2 + (1 for sends).
  Lane main_;
  std::map<int, std::unique_ptr<Lane>> lanes_;
};

// Writes recv buffers of `op` with 0xFF bytes (CheckLevel::debug, async ops, before they run) so
// that reading them before the Work completed shows NaN / -1 instead of plausible old data.
void poison_output(const OpDesc& op, int rank, int nranks);

}  // namespace twinccl::emu
