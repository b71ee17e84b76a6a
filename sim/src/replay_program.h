// Internal: a trace lowered to plain data that one SimGrid simulation plays (replay_build.cc
// builds it, replay_simgrid.cc plays it, replay.cc turns the times into a ReplayResult).
//
// Vocabulary. An *instance* is one operation of a communicator (all its ranks: a collective, or a
// send/recv pair); a *member* is that operation on one rank, with its steps (each a list of flow
// transfers that step waits for; a transfer belongs to a step of its sender's member and one of
// its receiver's member and starts when both reached them, as in flow playback). A *batch* is
// what one rank's stream of one communicator runs at once (one op, or the ops of one group); it
// starts when all its members were issued and the previous batch of that stream finished.
#pragma once

#include <vector>

#include "flow_program.h"
#include "trace_analysis.h"

namespace twinccl::sim::detail {

struct ReplayMember {
  int rank = 0;                         // world rank
  int instance = 0;                     // index into ReplayProgram::instances
  int batch = 0;                        // index into ReplayProgram::batches
  std::vector<std::vector<int>> steps;  // transfers per step
};

struct ReplayInstance {
  std::vector<int> members;      // index into ReplayProgram::members
  double fixed_latency_s = 0.0;  // from the moment all members arrived to the first step
};

// Members, and the batches before and after it on its stream (-1 = none): check_and_match's.
using ReplayBatch = MatchedTrace::Batch;

enum class ReplayEventKind { compute, issue, wait };

struct ReplayEvent {
  ReplayEventKind kind = ReplayEventKind::compute;
  int member = -1;       // issue, wait
  double seconds = 0.0;  // compute
};

struct ReplayProgram {
  FlowProgram flow;  // links, routes (rank = world rank) and transfers; rank_steps unused
  std::vector<ReplayMember> members;
  std::vector<ReplayInstance> instances;
  std::vector<ReplayBatch> batches;
  std::vector<std::vector<ReplayEvent>> rank_events;  // program order; ends with waits for all
  // Per transfer: the member that sends it and the member that receives it.
  std::vector<std::pair<int, int>> transfer_members;

  std::size_t event_count() const {
    std::size_t n = 0;
    for (const auto& e : rank_events) n += e.size();
    return n;
  }
  // Values play_replay returns: per member arrive/start/end, then per event start/end.
  std::size_t time_values() const { return 3 * members.size() + 2 * event_count(); }
};

// Plays the program in SimGrid (inside a child process: see simgrid_run.h) and returns, in
// seconds: for each member its arrival (batch started on its rank), start (its instance's
// members all arrived) and end, then for each rank event (rank by rank) its start and end.
std::vector<double> play_replay_with_simgrid(const ReplayProgram& program);

}  // namespace twinccl::sim::detail
