// Internal: the cross-rank half of check_trace (trace_analysis.cc).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "twinccl/sim/replay_trace.h"

namespace twinccl::sim::detail {

// "all_reduce #5 on comm 'dp'" (the op's communicator index must be valid).
std::string op_label(const Trace& trace, const TraceOp& op);

// Matches ops into operations and checks them (counterparts, agreement, collective order), then
// dry-runs the replay's rules to find a deadlock. Needs the per-rank checks of check_trace done;
// `membership[r]` lists (communicator, comm rank) of world rank r by communicator. Throws
// ConfigError or DeadlockError whose message starts with `source`.
void check_trace_consistency(const Trace& trace, std::string_view source,
                             const std::vector<std::vector<std::pair<int, int>>>& membership);

}  // namespace twinccl::sim::detail
