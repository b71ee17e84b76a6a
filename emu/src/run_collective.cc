// EmuCommunicator's collectives: the rendezvous, the fingerprint and shared-buffer checks, then
// the led small path, the direct fast path or the algorithm's schedule (communicator.cc issues
// them; run_group calls run_collective for each collective of a task).
#include <optional>

#include "communicator.h"
#include "executor.h"
#include "twinccl/algorithm_defaults.h"
#include "twinccl/errors.h"
#include "twinccl/reduction.h"

namespace twinccl::emu {

emu::WaitSite EmuCommunicator::wait_site(const Lane& lane, emu::WaitKind kind, std::string_view op,
                                         Where where, int peer, std::uint64_t seq) const {
  emu::WaitSite site;
  site.agent = lane.agent;
  site.kind = kind;
  site.rank = rank_;
  site.seq = seq;
  site.peer = peer;
  site.op = op;
  site.where = where;
  site.on_user_thread = lane.stream.running_inline();
  return site;
}

void EmuCommunicator::run_collective(Lane& lane, const OpDesc& op, std::uint64_t seq) {
  if (fault(FaultStage::before_collective, op, seq) == FaultAction::abort_communicator)
    shared_->world->check_abort();
  emu::Rendezvous& rdv = shared_->rendezvous;
  emu::WaitSite site =
      wait_site(lane, emu::WaitKind::collective, twinccl::name(op.kind), op.where, -1, seq);
  emu::Meeting& meeting =
      rdv.arrive(seq, rank_, op, {}, {}, &site, leads(op) ? &emu::lead_small_collective : nullptr,
                 &cache_.staging());
  // Led: the last rank to arrive ran it for everyone, so nobody reads this rank's buffers.
  if (meeting.led) {
    std::exception_ptr error = meeting.lead_error;
    bool mismatch = meeting.mismatch_error;
    bool leader = meeting.leader == rank_;
    // Every rank throws its own MismatchError, as they would unled.
    if (error && mismatch && !leader) {
      try {
        emu::spec_from_meeting(meeting);
      } catch (...) {
        error = std::current_exception();
      }
    }
    rdv.leave(seq, meeting);
    if (error && !mismatch && !leader)
      shared_->world->check_abort();  // the leader's failure aborted the world
    if (error) std::rethrow_exception(error);
    return;
  }
  bool agreed = false;  // the fingerprint passed: errors after it abort the world
  // The others may be reading this rank's buffers: stop them, and unwind only once they are done.
  auto fail_running = [&] {
    try {
      shared_->world->abort(meeting.label() + ": rank " + std::to_string(rank_) +
                            " failed: " + current_error_text());
    } catch (...) {  // no memory for the text: the others must still stop reading our buffers
      shared_->world->abort_without_reason();
    }
    meeting.wait_until_nobody_reads(rank_);
    rdv.leave(seq, meeting);
  };
  try {
    CollectiveSpec spec = emu::spec_from_meeting(meeting);  // the fingerprint: every rank checks it
    agreed = true;
    fault(FaultStage::in_collective, op, seq);
    if (op.kind != OpKind::barrier) {
      emu::RankStaging& staging = cache_.staging();
      std::optional<Reduction> reduction;
      if (is_reducing(op.kind)) {
        staging.ops.clear();
        staging.ops.reserve(meeting.ops.size());
        for (const OpDesc& o : meeting.ops) staging.ops.push_back(o.op);
        reduction = Reduction::make(op.dtype, staging.ops);
      }
      emu::RankContext ctx{meeting, rank_, reduction ? &*reduction : nullptr, op.dtype, &staging};
      std::string algorithm = algorithm_for(op);
      const EmuConfig& config = shared_->config;
      bool default_params = config.channels == 1 && config.chunk_elements == 0;
      if (!config.schedule_path && default_params && emu::fast_path_supports(op.kind) &&
          is_default_algorithm(op.kind, algorithm)) {
        emu::run_fast_path(ctx);
      } else {  // built on the first call of this shape, then reused (schedule_cache.h)
        const RankSchedule& schedule = cache_.schedule(spec, algorithm, params_of(config), rank_);
        emu::execute_schedule(ctx, schedule, op.send, op.recv);
      }
    }
  } catch (const AbortedError&) {
    meeting.wait_until_nobody_reads(rank_);
    rdv.leave(seq, meeting);
    throw;
  } catch (const MismatchError&) {  // every rank of the meeting throws the same one
    meeting.wait_until_nobody_reads(rank_);
    rdv.leave(seq, meeting);
    throw;
  } catch (const InvalidArgument&) {  // before running: shared buffers, every rank throws it
    if (agreed) {
      fail_running();
    } else {
      meeting.wait_until_nobody_reads(rank_);
      rdv.leave(seq, meeting);
    }
    throw;
  } catch (...) {
    fail_running();
    throw;
  }
  rdv.leave(seq, meeting);
  cache_.trim(size());
}

bool EmuCommunicator::leads(const OpDesc& op) {
  const EmuConfig& config = shared_->config;
  if (config.fault_hook || config.schedule_path || config.channels != 1 ||
      config.chunk_elements != 0) {
    return false;
  }
  if (op.kind == OpKind::barrier) return true;
  if (!emu::fast_path_supports(op.kind) || !emu::small_enough_to_lead(op)) return false;
  // Nothing forced and no chooser: the default algorithm, known without asking the registry
  // (default_algorithm() builds its candidates' lists: allocations on every call).
  if (op.algorithm.empty() && config.algorithm.empty() && !config.default_algorithm) return true;
  return is_default_algorithm(op.kind, algorithm_for(op));
}

}  // namespace twinccl::emu
