// Internal: the cross-rank half of check_trace (trace_analysis.cc).
#pragma once

#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "twinccl/sim/replay_trace.h"

namespace twinccl::sim::detail {

// The stream a rank runs `op` on, as (comm, peer, direction): (comm, -1, 0) for a collective and
// for every op when the trace's send/recv ran on their communicator's stream; (comm, peer, 1 send
// or 2 recv) when they ran per peer (Trace::p2p_per_peer_streams). Such a send/recv is a batch of
// its own even inside a group (the group's collectives form one batch on the comm's stream).
using StreamKey = std::tuple<int, int, int>;
StreamKey stream_of(const Trace& trace, const TraceOp& op);
bool own_batch_in_group(const Trace& trace, const TraceOp& op);

// A trace's ops matched into operations, and the batches replay would run them in. A member is
// one op of one rank, numbered rank by rank (rank r's op i is member base[r] + i).
struct MatchedTrace {
  struct Batch {  // one op, or one group on one communicator, of one rank's stream
    std::vector<int> members;
    int previous = -1, next = -1;  // the batches before and after it on that stream
  };
  std::vector<int> base;                // per rank: its first member
  std::vector<int> rank_of;             // per member
  std::vector<int> instance_of;         // per member: its operation
  std::vector<std::vector<int>> slots;  // per operation: its members by comm rank (send, recv)
  std::vector<int> batch_of;            // per member
  std::vector<Batch> batches;
  const TraceOp& op_of(const Trace& trace, int member) const {
    const auto r = static_cast<std::size_t>(rank_of[static_cast<std::size_t>(member)]);
    return trace.ranks[r].ops[static_cast<std::size_t>(member - base[r])];
  }
};

// Plays replay's rules without time (trace_dry_run.cc); throws DeadlockError starting with
// `source` naming the first stuck rank, the op it waits for and why that op cannot start.
void dry_run(const Trace& trace, std::string_view source, const MatchedTrace& matched);

// Matches ops into operations and checks them (counterparts, agreement, collective order), then
// dry-runs the replay's rules to find a deadlock. Needs the per-rank checks of check_trace done;
// `membership[r]` lists (communicator, comm rank) of world rank r by communicator. Throws
// ConfigError or DeadlockError whose message starts with `source`.
MatchedTrace check_trace_consistency(
    const Trace& trace, std::string_view source,
    const std::vector<std::vector<std::pair<int, int>>>& membership);
// check_trace, keeping the match it made: the operations and batches replay lowers
// (trace_check.cc).
MatchedTrace check_and_match(const Trace& trace, std::string_view source);

}  // namespace twinccl::sim::detail
