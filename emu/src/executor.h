// Executes collectives on real bytes for one rank, inside a Meeting where every rank's call is
// known: either the schedule path (the rank's steps of the algorithm's Schedule, pull model) or
// the direct fast path (shared-memory reduction reproducing the ring's fold order bit for bit).
//
//   RankContext ctx{meeting, rank, &reduction, dtype, &cache.staging()};  // schedule_cache.h
//   execute_schedule(ctx, schedule, input, output);        // any algorithm
//   if (fast_path_supports(op)) run_fast_path(ctx);        // same bytes, fewer copies
#pragma once

#include <cstddef>

#include "rendezvous.h"
#include "schedule_cache.h"
#include "twinccl/reduction.h"
#include "twinccl/schedule.h"

namespace twinccl::emu {

struct RankContext {
  Meeting& meeting;
  int rank;
  const Reduction* reduction;  // reducing collectives only
  DataType dtype;
  RankStaging* staging;  // the running rank's working memory, reused across calls (nullptr: own)
};

// Runs this rank's steps. input/output are the rank's user buffers (may alias: NCCL in-place).
void execute_schedule(const RankContext& ctx, const RankSchedule& schedule, const void* input,
                      void* output);

// True when the direct path implements `kind` with the default algorithm's results.
bool fast_path_supports(OpKind kind);
// Runs the direct path (ends with a barrier of the meeting: every rank's outputs are final).
void run_fast_path(const RankContext& ctx);

// Small collectives: the last rank to arrive runs every rank's share (Rendezvous::arrive's
// `lead`, with its own staging); what it throws is kept in the meeting (lead_error,
// mismatch_error).
inline constexpr std::size_t kLeadMaxBytes = 16 * 1024;  // per rank's count * element size
bool small_enough_to_lead(const OpDesc& op);
void lead_small_collective(Meeting& meeting, RankStaging* staging);

// The spec every rank derives from all ranks' calls (throws MismatchError when they disagree,
// InvalidArgument when two ranks' buffers overlap: Meeting::shared_buffers).
CollectiveSpec spec_from_meeting(const Meeting& meeting);

}  // namespace twinccl::emu
