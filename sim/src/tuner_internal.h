// Internal: what the tuner shares with predict, flow playback and the replay (tuner.cc); how a
// choice is priced as flows: transfer_pricing.h.
#pragma once

#include <string_view>
#include <vector>

#include "model.h"
#include "twinccl/sim/tuner.h"

namespace twinccl::sim::detail {

// NCCL's view of the GPUs `ranks`: the topology's link facts (view_of), with the nodes the ranks
// span and the ranks in the first of them.
TopologyView view_of_ranks(const topo::Topology& topology, const std::vector<int>& ranks);

// Protocols an algorithm runs with for this collective: NCCL's LL/LL128 only where NCCL models
// the algorithm with them (ring; tree for all_reduce), Simple everywhere else.
std::vector<Protocol> protocols_applicable(std::string_view algorithm, OpKind kind);

}  // namespace twinccl::sim::detail
