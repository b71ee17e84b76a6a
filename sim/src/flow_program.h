// Internal: a flow-level program, plain data that the SimGrid side plays (flow_simgrid.cc).
//
// A program is links (the topology links its transfers cross), routes (rank to rank, as lists of
// link directions) and transfers. Either `rank_steps` says, per rank and step, which transfers the
// step holds (a transfer belongs to its sender's step and its receiver's step: it starts when the
// sender reached its step, as NCCL's buffered sends do, and the receiver leaves its step when all
// its receives ended), or `rounds` lists groups of transfers that all start together, one group
// after the other (a compressed symmetric ring: each distinct round once).
#pragma once

#include <utility>
#include <vector>

#include "route_latency.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim::detail {

struct FlowLink {
  topo::LinkId topology_link = -1;
  double bandwidth_bytes_per_s = 0.0;
  double latency_s = 0.0;
  bool fatpipe = false;
  bool full_duplex = true;  // SPLITDUPLEX: each direction has the bandwidth on its own
};

struct FlowHop {
  int link = 0;         // index into FlowProgram::links
  bool forward = true;  // from the topology link's a to b
};

struct FlowRoute {
  int src = 0, dst = 0;  // hosts: ranks 0..nranks-1, then NVSwitches (FlowProgram::switch_hosts)
  std::vector<FlowHop> hops;
  double latency_s = 0.0;
};

struct FlowTransfer {
  int route = 0;
  double bytes = 0.0;                 // played: on the wire x played_per_wire_byte
  double played_per_wire_byte = 1.0;  // a link share priced as bytes (transfer_pricing.cc)
  double delay_s = 0.0;               // software latency before the data moves
  int step = 0;                       // sender's step (for traces)
  // Schedule ranks of sender and receiver (index into rank_steps; a compressed ring: the sender's
  // ring position). -1 = the route's ranks.
  int src_rank = -1, dst_rank = -1;
  // How many equal transfers (route, bytes, delay, step) this one stands for: a uniform direct
  // all_to_all's channel pieces folded (flow_direct.cc). Only rounds played by classes
  // (flow_fluid.h) and link loads read it; SimGrid plays expand_copies(program).
  double copies = 1.0;
  // Its step runs as one grouped send/recv (transfer_pricing.cc: the what-if algorithms whose
  // steps forward what the step before received, bruck and halving_doubling, as ncclGroupStart/End
  // or MPI_Sendrecv per step): it moves once its sender AND its receiver reached their steps (a
  // send needs the posted receive), and its sender leaves the step only when it ended. Otherwise
  // sends are buffered as NCCL's kernels' are: it moves when the sender reached its step.
  bool grouped = false;
};

struct FlowRound {
  std::vector<int> transfers;
};

struct FlowProgram {
  int nranks = 0;
  int switch_hosts = 0;  // NVSwitch hosts after the ranks (NVLS's in-switch reduction)
  std::vector<FlowLink> links;
  std::vector<FlowRoute> routes;
  std::vector<FlowTransfer> transfers;
  std::vector<std::vector<std::vector<int>>> rank_steps;  // dependency playback
  std::vector<FlowRound> rounds;                          // compressed playback: distinct rounds
  // Compressed: the rounds in time order as (index into rounds, how many in a row).
  std::vector<std::pair<int, double>> round_sequence;
  bool compressed = false;
  double fixed_latency_s = 0.0;  // added once (NCCL's base latency)
};

// Start and end of every transfer (seconds; rounds: from the round's start), by transfer index.
struct FlowTimes {
  std::vector<double> start_s, end_s;
};

// Plays the program on a fresh SimGrid engine in a child process (SimGrid 3.32 allows one engine
// per process and seals the platform at its first run, so each simulation gets its own process).
FlowTimes play_in_child(const FlowProgram& program);
// The SimGrid side, run inside that child.
FlowTimes play_with_simgrid(const FlowProgram& program);

// A round-based program (compressed) with one representative per class of isomorphic flow groups
// that share no link with each other (flow_symmetry.cc): `reduced` holds the representatives (its
// own links, routes and hosts; the same rounds); played[t] is the reduced transfer whose times
// transfer t takes (-1: t is in no round).
struct SymmetricPlan {
  FlowProgram reduced;
  std::vector<int> played;
  std::size_t groups = 0;   // independent flow groups, summed over rounds
  std::size_t classes = 0;  // of which played (distinct signatures), summed over rounds
};
SymmetricPlan reduce_symmetric(const FlowProgram& program);
// play_in_child(reduce_symmetric(program).reduced), its times copied to every transfer: equal to
// play_in_child(program) up to SimGrid's floating-point order. program.compressed must be true.
// `played`, if given, gets the transfers SimGrid played (the representatives').
FlowTimes play_symmetric(const FlowProgram& program, std::size_t* played = nullptr);

// Bandwidth factors by link type (line rate = 1): network links get the share of a NIC's line
// rate NCCL's channels get; NVLink/PCIe links, for channel algorithms (ring, tree, PAT), the
// share of the GPU's link NCCL's channel search uses (topology_view.cc: 360 of 370.8 GB/s on
// H100, 20 of 24 on PCIe gen4). Platforms apply the network part (platform_links); the pricing
// applies the NVLink/PCIe part per call as wire bytes (transfer_pricing.h).
// route_latency: which link latencies a route carries (route_latency.h): all of them without
// software latency; with NCCL's per-hop latencies charged as transfer delays, only the links
// beyond NCCL's hop (its figure already holds the hardware of one hop).
struct LinkScale {
  double network = 1.0, nvlink = 1.0, pcie = 1.0;
  RouteLatency route_latency = RouteLatency::all;
};

// Builds links and routes on demand: route_id(src, dst) adds the route and its links once.
class RouteTable {
 public:
  using LinkScale = detail::LinkScale;
  RouteTable(const topo::Topology& topology, FlowProgram& program, LinkScale scale = {});
  RouteTable(const topo::Topology& topology, FlowProgram& program, double network_efficiency)
      : RouteTable(topology, program, LinkScale{.network = network_efficiency}) {}
  int route_id(int src, int dst);
  // The one-link route between a rank's GPU and the NVSwitch it links to (up: GPU -> switch);
  // the switch is a host of its own (added to program.switch_hosts once). -1 = no NVSwitch.
  int switch_route(int rank, bool up);
  // Which class of link a route crosses, for NCCL's per-hop latency (route_link_class).
  LinkClass route_class(int route) const { return route_class_[static_cast<std::size_t>(route)]; }

 private:
  int link_index(topo::LinkId id);
  // The latency charged for the route src -> dst (`links`): across rails, PXN's (route_table.cc).
  double route_latency_s(int src, int dst, const std::vector<topo::LinkId>& links);
  const topo::Topology& topology_;
  FlowProgram& program_;
  std::vector<int> link_index_;  // per topology link, -1 = not yet in the program
  std::vector<std::vector<std::pair<int, int>>> by_src_;  // per src rank: (dst, route id)
  std::vector<LinkClass> route_class_;
  LinkScale scale_;
  std::vector<std::pair<topo::VertexId, int>> switch_host_;  // NVSwitch vertex -> host
};

}  // namespace twinccl::sim::detail
