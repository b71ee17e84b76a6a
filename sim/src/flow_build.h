// Internal: turning a request into a FlowProgram (flow_program_build.cc) and playing it (flow.cc).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "flow_program.h"
#include "twinccl/algorithms.h"
#include "twinccl/schedule.h"
#include "twinccl/sim/flow_report.h"

namespace twinccl::sim::detail {

// Bytes on the wire and software delay of one transfer.
struct TransferCost {
  double element_bytes = 4.0;
  double wire_bytes_per_byte = 1.0;
  std::array<double, 3> delay_by_route_class_s{};  // by LinkClass: NVLink/other, PCIe, network
  double bytes(std::size_t elements) const {
    return static_cast<double>(elements) * element_bytes * wire_bytes_per_byte;
  }
  double bytes_exact(double elements) const {
    return elements * element_bytes * wire_bytes_per_byte;
  }
  double delay_s(LinkClass route_class) const {
    return delay_by_route_class_s[static_cast<std::size_t>(route_class)];
  }
};

// Which GPU plays schedule rank r on channel c (rails.cc). Across nodes NCCL spreads its channels
// over the NICs (channel c leaves a node through NIC c mod nics); here channel c's ring or tree
// enters each node at the node's GPU c mod gpus_per_node (the GPU of rail c): a rotation of the
// node's ranks. Empty perms = schedule rank r is topology rank r on every channel.
struct ChannelRanks {
  std::vector<std::vector<int>> perms;  // [rotation][schedule rank] -> topology rank
  // Each ring order's hops inside a node are single GPU-GPU links no other order uses (a torus, a
  // fully linked node: mesh_ranks, node_path_offsets).
  bool direct_links = false;
  std::size_t distinct() const { return perms.empty() ? 1 : perms.size(); }
  std::size_t rotation_of(int channel) const {
    return static_cast<std::size_t>(channel) % distinct();
  }
  int topology_rank(int rank, int channel) const {
    return perms.empty() ? rank : perms[rotation_of(channel)][static_cast<std::size_t>(rank)];
  }
};
// Rotations for a call whose rank r is topology GPU gpus[r]: one per GPU of a node when the GPUs
// span several nodes of equal counts that have NICs; none (empty perms) otherwise.
ChannelRanks rail_ranks(const topo::Topology& topology, std::span<const int> gpus);
// Link-disjoint ring orders over GPUs linked directly to each other (ring_orders.cc: the MI300X
// xGMI mesh, a torus): perms[c] = the c-th directed Hamiltonian cycle (topology ranks), the
// cycles together using every GPU-GPU link direction once; empty when the GPUs are not such a
// regular graph or no decomposition was found.
ChannelRanks mesh_ranks(const topo::Topology& topology, std::span<const int> gpus);
// For rail_ranks: a node's j-th ring position on channel c plays its local GPU
// (c + offsets[j]) mod g. 0, 1, ..., g-1 (a rotation) unless the node's g GPUs (g even) are all
// linked to each other: then paths over distinct links from GPU c to GPU c + g/2 (ring_orders.cc).
std::vector<int> node_path_offsets(const topo::Topology& topology,
                                   std::span<const topo::VertexId> node_gpus);

// world_ranks (optional): the topology rank of each schedule rank (a sub-communicator's members);
// empty = schedule rank r is topology rank r. rank_steps stay indexed by schedule rank.
void program_from_schedule(const Schedule& schedule, const TransferCost& cost, RouteTable& routes,
                           FlowProgram& program, std::span<const int> world_ranks = {});
// The same with the GPU of each (schedule rank, channel) from `ranks`.
void program_from_schedule(const Schedule& schedule, const TransferCost& cost, RouteTable& routes,
                           FlowProgram& program, const ChannelRanks& ranks);
// Compressed ring rounds; channels sharing a rotation of `ranks` are one flow (equal flows on
// equal routes: exact when every rotation has as many channels).
void program_for_ring(const CollectiveSpec& spec, const AlgorithmParams& params,
                      const TransferCost& cost, RouteTable& routes, FlowProgram& program,
                      const ChannelRanks& ranks = {});
// A ring as one "bulk" flow per rank and rotation of `ranks` to its ring successor, carrying the
// rotation's share of all L steps' bytes; rank_steps: one step per rank holding its sends and
// receives. Returns what it folds into the call's fixed latency: L per-hop delays and L-1 route
// latencies of the slowest edge (exact without contention for equal chunks).
double program_for_bulk_ring(const CollectiveSpec& spec, const AlgorithmParams& params,
                             const TransferCost& cost, RouteTable& routes, FlowProgram& program,
                             const ChannelRanks& ranks);

// A pipelined schedule (NCCL's tree all_reduce, ring broadcast/reduce; built with one chunk per
// step) as bulk flows, its steady state (flow_bulk_pipeline.cc): every transfer starts at once,
// rank_steps one step per rank holding its sends and receives. Returns the route latencies along
// the schedule's path that the round does not pay (to fold into the call's fixed latency).
double program_for_bulk_pipeline(const Schedule& schedule, const TransferCost& cost,
                                 RouteTable& routes, FlowProgram& program,
                                 const ChannelRanks& ranks);

// NVLS (one node) and NVLS-tree all_reduce as switch flows (flow_nvls.cc), call rank r on GPU
// gpus[r]; rank_steps: one step per rank holding its flows (it is their sender). False when the
// topology gives the GPUs no NVSwitch (or NICs, for NVLS-tree): play the schedule instead.
struct TopologyView;
struct Resolved;
enum class NcclAlgo;
bool program_for_nvls(const topo::Topology& topology, const TopologyView& view, const Resolved& r,
                      NcclAlgo algo, std::span<const int> gpus, RouteTable& routes,
                      FlowProgram& program);

// True when every rank of a dependency program moves data in one step at most (its other steps
// hold no transfers, e.g. a direct reduce_scatter's local folds): every transfer starts at once,
// so the program plays as one round (flow.cc), by classes, not step by step.
bool one_transfer_step(const FlowProgram& program);

// Bytes and busy time of every link direction the program's transfers crossed, busiest first;
// transfer t counts transfer_repeats[t] times; utilisation = busy time / time_s.
std::vector<LinkLoad> link_loads(const topo::Topology& topology, const FlowProgram& program,
                                 const std::vector<double>& transfer_repeats, double time_s);

}  // namespace twinccl::sim::detail
