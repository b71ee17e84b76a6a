// Internal: the one owner of "how a collective call becomes priced flows". Flow playback of one
// call (flow.cc) and the trace replay (replay_build.cc) both ask it; nothing else prices a
// collective's transfer, so a one-call replay plays exactly the flows perf's flow fidelity plays.
// A send/recv pair's send has its own owner, p2p_send_price.h (predict_p2p and the replay).
//
//   const Tuner tuner(topology, ranks);                       // the communicator, tuned once
//   const PricedCall priced = price_call(tuner, r);           // r: the tuner's choice for a call
//   RouteTable routes(topology, program, platform_links(topology));
//   const CallFlows flows = add_call_flows(tuner, r, priced, RingForm::steps, routes, program);
//   // program.rank_steps[call rank]: the call's transfers, bytes priced; flows.fixed_latency_s
#pragma once

#include <optional>
#include <string_view>

#include "flow_build.h"
#include "model.h"
#include "twinccl/sim/tuner.h"

namespace twinccl::sim::detail {

// One call priced: what every transfer costs and what the call costs once.
struct PricedCall {
  TransferCost cost;             // wire bytes per byte (protocol), per-hop delay by route class
  double fixed_latency_s = 0.0;  // NCCL's latency charged once before the first transfer
  AlgorithmParams params;        // channels (0 settled: flow's default), tree pipelining
  ChannelRanks gpus;             // never empty: call rank -> topology GPU per channel (rails)
  std::string_view schedule;     // the registry algorithm played (nvls_tree: hierarchical)
  std::optional<NcclAlgo> nccl;  // NCCL's algorithm, if NCCL models it
  // Share of each intra-node link class's rate the call's algorithm gets (ring/tree/pat: NCCL's
  // intra-node channels over the GPU's links, for a known arch). The platform is shared by calls
  // of different algorithms, so the share is priced as wire bytes per route (add_call_flows).
  LinkScale links;
  // Each step one grouped send/recv (FlowTransfer::grouped): bruck and halving_doubling.
  bool grouped_steps = false;
};

// Whether a call's channels play its ranks on other GPUs per channel (rails across nodes, else
// the link-disjoint ring orders of a mesh or torus: channel_ranks): only where NCCL builds a ring
// or tree per channel, or a what-if algorithm that is neither rooted, uneven nor grouped (direct
// all_gather/all_to_all/..., hierarchical). Flow's playback and the alpha-beta model both ask.
bool rotated_channels(const Resolved& r, bool nccl);
// The GPUs of a rotated call's channels: rail_ranks, else mesh_ranks, else empty perms.
ChannelRanks channel_ranks(const topo::Topology& topology, std::span<const int> gpus);

// r: the call (spec with nranks, dtype) with the tuner's (or a forced, checked) algorithm and
// protocol; r.params.channels 0 = flow's default channels.
PricedCall price_call(const Tuner& tuner, const Resolved& r);

// The platform's links, the same for every call of a simulation: network links at NCCL's share of
// a NIC (network_efficiency), every other link at its line rate. Route latencies: with software
// latency on, calls are charged NCCL's per-hop latencies, which hold one hop's hardware, so routes
// carry only the links beyond such a hop (route_latency.h: spine tiers, GPU forwarding); without
// it, the hardware alone: every link's latency.
LinkScale platform_links(const topo::Topology& topology, bool software_latency);

// How a ring (all_reduce, reduce_scatter, all_gather, more than one rank) is lowered:
//   steps  - every transfer of its schedule (any other algorithm is lowered so too);
//   rounds - compressed rounds (program.rounds/round_sequence), flow's large rings;
//   bulk   - one flow per rank and rail carrying all L steps, the replay's large rings (exact
//            without contention for equal chunks; it keeps links loaded for the whole call).
enum class RingForm { steps, rounds, bulk };

struct CallFlows {
  bool rounds = false;  // the transfers are program.rounds; else program.rank_steps
  bool bulk = false;    // one step of flows that all start at once (switch flows, bulk ring)
  double fixed_latency_s = 0.0;  // the call's: priced latency, plus the delays a bulk ring folds in
};

// Adds the call's transfers to `program` (routes between topology GPUs; src_rank/dst_rank: call
// ranks): NVLS/NVLS-tree as switch flows (flow_nvls.cc) where the GPUs reach an NVSwitch, a ring
// in `ring` form, else the schedule's steps. rank_steps is replaced (indexed by call rank, one
// entry per rank of the call). Every added transfer's bytes carry the link share (wire_factor).
CallFlows add_call_flows(const Tuner& tuner, const Resolved& r, const PricedCall& priced,
                         RingForm ring, RouteTable& routes, FlowProgram& program);

}  // namespace twinccl::sim::detail
