// Internal: lowering a Trace to a ReplayProgram (replay_build.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "replay_program.h"
#include "twinccl/sim/replay.h"

namespace twinccl::sim::detail {

// What the result needs to know about each instance (ReplayProgram::instances, same order).
struct InstanceInfo {
  const TraceOp* first = nullptr;  // the op as the first rank recorded it
  std::string algorithm;           // "p2p" for send/recv
  Protocol protocol = Protocol::simple;
  bool bulk = false;
};

// `matched`: check_and_match's operations and batches of the trace (members, instances and
// batches keep its numbering). Throws InvalidArgument for a forced algorithm that does not apply.
// Each communicator's Tuner chooses every collective's algorithm and protocol. Compute flops take
// 1 / flops_per_second seconds each.
void build_replay_program(const Trace& trace, const MatchedTrace& matched,
                          const topo::Topology& topology, const ReplayOptions& options,
                          double flops_per_second, ReplayProgram& program,
                          std::vector<InstanceInfo>& info);

// Caps on what a replay holds and plays (replay_cost.cc), each a ConfigError naming the call:
// before a call is lowered, a schedule with one transfer per rank pair (direct, pat) that would
// take the program over its cap of transfers (channels < 0: the call is built, `transfers_so_far`
// includes it); once all are built, a call whose transfers x the transfers
// that may be in flight with it exceed the playback's cap.
void check_replay_call(const Trace& trace, const TraceOp& op, int nranks, std::string_view schedule,
                       int channels, std::size_t transfers_so_far);
void check_replay_cost(const Trace& trace, const std::vector<InstanceInfo>& info,
                       const ReplayProgram& program);

}  // namespace twinccl::sim::detail
