// Internal: what the tuner shares with flow playback and the replay (tuner.cc, tuner_flow.cc).
#pragma once

#include <string_view>
#include <vector>

#include "flow_build.h"
#include "model.h"
#include "twinccl/sim/tuner.h"

namespace twinccl::sim::detail {

// NCCL's view of the GPUs `ranks`: the topology's link facts (view_of), with the nodes the ranks
// span and the ranks in the first of them.
TopologyView view_of_ranks(const topo::Topology& topology, const std::vector<int>& ranks);

// Protocols an algorithm runs with for this collective: NCCL's LL/LL128 only where NCCL models
// the algorithm with them (ring; tree for all_reduce), Simple everywhere else.
std::vector<Protocol> protocols_applicable(std::string_view algorithm, OpKind kind);

// How the flow fidelity plays a choice of the tuner on its communicator's GPUs: the transfers'
// wire bytes and per-hop delays, the latency charged once, channels and pipelining, and which GPU
// plays each schedule rank on each channel (rails across nodes). The same rules as flow.cc's
// flow() (kept in step by tests/sim/test_one_tuner.cc: a one-call replay equals perf's flow).
struct FlowPlan {
  TransferCost cost;
  double fixed_latency_s = 0.0;
  AlgorithmParams params;
  ChannelRanks gpus;          // never empty: schedule rank -> topology GPU per channel
  std::string_view schedule;  // the registry algorithm played (nvls_tree: hierarchical)
  bool nvls = false;          // nvls/nvls_tree: switch flows where the GPUs reach an NVSwitch
  // Share of each link class's rate this call gets (flow.cc's link_scale): network = NCCL's
  // share of a NIC (topology-wide); NVLink/PCIe = NCCL's intra-node channels over the GPU's links
  // for ring/tree/pat. The replay shares one platform between calls, so it applies the
  // NVLink/PCIe part as wire bytes per route (wire_factor) instead of link rates.
  LinkScale links;
};
// How many wire bytes per byte a transfer on `route` of `program` (links at line rate except
// network links, already at links.network) carries so that alone it takes as long as on links
// scaled by plan.links: min(rate) / min(rate x scale) over the route's links.
double wire_factor(const topo::Topology& topology, const FlowProgram& program, int route,
                   const LinkScale& links);
// r.algorithm and r.protocol: the choice; r.params.channels 0 = flow's default.
FlowPlan flow_plan(const Tuner& tuner, const Resolved& r);

}  // namespace twinccl::sim::detail
