// The one owner of how a collective call becomes priced flows (transfer_pricing.h).
//
// How it works, for one choice of the tuner on its communicator's GPUs:
// * Latency: an algorithm NCCL models (ring, tree, NVLS, NVLS-tree, PAT) is charged NCCL's whole
//   latency once, as the analytic model charges it (base + hops, and NVLS's pipeline fill), and
//   its transfers no hop delay: a flow playback overlaps per-transfer delays with other chunks'
//   transfers (a pipelined ring paid ~40% of NCCL's ring latency), so only a fixed charge makes
//   flow equal analytic where no link is shared. Algorithms NCCL has no model for: the ring's
//   Simple base once and a hop latency on every transfer by its route's class, as the alpha-beta
//   model charges every step. The routes add only the link latencies NCCL's hop figures do not
//   hold (platform_links: spine tiers, GPU forwarding), never the hardware of a hop twice.
// * Wire bytes: ring, tree and pat move data x busBw / the protocol's bandwidth (NCCL's LL/LL128
//   factors and caps, tree correction), so LL never wins at large sizes; others the protocol's
//   line factor.
// * Channels 0 = one per GPU of a node across nodes with NICs, channel c's ring or tree entering
//   every node at its GPU c (rail_ranks); inside a node 1, or on GPUs linked directly to each
//   other (xGMI mesh, torus) one per link-disjoint ring order (mesh_ranks), so every link carries
//   its share. NCCL's tree all_reduce and ring broadcast/reduce (pipelines NCCL's model times as
//   steady state) play as bulk flows, their fill charged once (flow_bulk_pipeline.cc); a tree NCCL
//   had no model for (none is registered today) would be pipelined in Simple's 512 KiB steps.
// * Link shares: the platform runs network links at NCCL's share of a NIC (platform_links, for
//   every call); for ring/tree/pat on a known arch the GPU's NVLink (or PCIe) gets NCCL's intra
//   channels' share (12 x 30 of 370.8 GB/s on H100), priced per route as wire bytes: a transfer
//   carries min(rate) / min(rate x share) of its route's links more bytes, so alone it takes what
//   it takes on scaled links, and calls of other algorithms on the same platform keep line rate.
// * Grouped steps: NCCL runs its own algorithms as kernels whose sends are buffered (a rank goes on
//   to its next step once its receives ended). The what-if algorithms whose step k+1 forwards what
//   step k received (bruck, halving_doubling) are run as one grouped send/recv per step, as any
//   implementation over NCCL's or MPI's point-to-point calls is: a send moves once its receiver
//   posted the receive of that step, and a rank leaves a step when its sends ended too. Buffered,
//   a rank's next sends shared its port with its unfinished ones and a receiver's port with the
//   next step's data, slowing the step its peers wait for: dgx-h100 bruck all_gather_v, ranks
//   weighted 1 + r mod 4, 331.5 us, 59% above its store-and-forward path (208.6 us).
// Example, 8 ranks of dgx-h100, ring Simple all_reduce: 8.4 + 14 x 3.4 us once, every transfer
// x 370.8/360 bytes; NVLS: NCCL's NVLS latency and fill once, 16 switch flows.
#include "transfer_pricing.h"

#include <algorithm>
#include <cmath>

#include "p2p_net_messages.h"
#include "twinccl/perf_math.h"
#include "what_if_latency.h"

namespace twinccl::sim::detail {
namespace {

// NCCL Simple's step (a 4 MiB buffer in 8 steps); fewer pieces past this many transfers
// (SimGrid's time and memory).
constexpr double kPipelineChunkBytes = 512.0 * 1024.0;
constexpr double kMaxPipelinedTransfers = 200'000.0;

bool channel_algo(std::optional<NcclAlgo> a) {
  return a == NcclAlgo::ring || a == NcclAlgo::tree || a == NcclAlgo::pat;
}

// min(rate) / min(rate x share) over the route's links (network links already at the platform's
// share; a call's own network share is the NICs' delivered share, for algorithms NCCL has no
// model for): the wire bytes per byte that make the route alone as fast as on scaled links.
double wire_factor(const topo::Topology& topology, const FlowProgram& program, int route,
                   const LinkScale& links) {
  double line = 0.0, scaled = 0.0;
  for (const FlowHop& hop : program.routes[static_cast<std::size_t>(route)].hops) {
    const FlowLink& l = program.links[static_cast<std::size_t>(hop.link)];
    if (l.fatpipe) continue;
    const topo::LinkType type = topology.link(l.topology_link).type;
    const double scale = type == topo::LinkType::nvlink ? links.nvlink
                         : type == topo::LinkType::pcie ? links.pcie
                                                        : links.network;
    line = line == 0.0 ? l.bandwidth_bytes_per_s : std::min(line, l.bandwidth_bytes_per_s);
    const double r = l.bandwidth_bytes_per_s * scale;
    scaled = scaled == 0.0 ? r : std::min(scaled, r);
  }
  return scaled > 0.0 ? line / scaled : 1.0;
}

// The pipelines NCCL's model times as steady state plus latency (and fill): a tree all_reduce, a
// ring broadcast/reduce (a chain).
bool bulk_pipeline(std::optional<NcclAlgo> a, OpKind k) {
  return (a == NcclAlgo::tree && k == OpKind::all_reduce) ||
         (a == NcclAlgo::ring && (k == OpKind::broadcast || k == OpKind::reduce));
}

bool ring_kind(OpKind k) {
  return k == OpKind::all_reduce || k == OpKind::reduce_scatter || k == OpKind::all_gather;
}

}  // namespace

bool rotated_channels(const Resolved& r, bool nccl) {
  return (!is_rooted(r.spec.kind) || nccl) && !is_uneven(r.spec.kind) &&
         !grouped_steps(schedule_algorithm(r.algorithm), nccl);
}

ChannelRanks channel_ranks(const topo::Topology& topology, std::span<const int> gpus) {
  ChannelRanks out = rail_ranks(topology, gpus);
  return out.perms.empty() ? mesh_ranks(topology, gpus) : out;
}

PricedCall price_call(const Tuner& tuner, const Resolved& r) {
  const topo::Topology& topology = tuner.topology();
  const TopologyView& view = tuner.view();
  const int n = r.spec.nranks;
  PricedCall priced;
  priced.schedule = schedule_algorithm(r.algorithm);
  priced.nccl = nccl_algo_for(r.algorithm, r.spec.kind);
  priced.grouped_steps = grouped_steps(priced.schedule, priced.nccl.has_value());
  // Channels rotate the ranks over a node's GPUs (rails.cc) or the mesh's cycles only where NCCL
  // builds a ring or tree per channel. A rooted collective played by another schedule (direct
  // gather/scatter/broadcast/reduce) keeps every rank on its own GPU: rotated, channel c's root
  // was another GPU, so the root's NIC carried 1/8 of its bytes (h100-cluster-2 gather 64 MiB:
  // 109.78 us, under the 699 us the root's 48 GB/s NIC needs for its 32 MiB from node 1). So does
  // an uneven collective (the _v variants): rotated, channel c's share of rank r's block left
  // from GPU r + c, so the heavy ranks' bytes spread over every GPU (mi300x-8 direct
  // all_gather_v 64 MiB, ranks weighted 1 + r mod 4: 241.5 us, under the 280 us rank 3's 13.4 MB
  // need on each of its 48 GB/s xGMI links). So do grouped steps (bruck, halving_doubling):
  // point-to-point calls go between the two ranks' own GPUs on every channel; rotated, the even
  // call's peers changed per channel (mi300x-8 bruck all_gather 64 MiB over the mesh's 7 ring
  // orders: 542.9 us against analytic's 1241.9, and against 1241.9 for the same counts as
  // all_gather_v).
  const bool rotated = rotated_channels(r, priced.nccl.has_value());
  if (rotated) priced.gpus = channel_ranks(topology, tuner.ranks());
  // Only for a known arch (NCCL's speed lists are per arch) or on the ring orders of a torus,
  // whose unknown arch the analytic model prices with the Hopper list over all its links.
  if (channel_algo(priced.nccl) && view.intra_gbps > 0.0 &&
      (view.arch != topo::GpuArch::unknown || priced.gpus.direct_links)) {
    TopologyView one_node = view;
    one_node.nodes = 1;
    double share = std::min(1.0, nccl_channels(one_node, 0).bus_gbps / view.intra_gbps);
    if (priced.gpus.direct_links && view.nodes > 1 && view.ranks_per_node > 1) {
      // Across nodes each channel crosses a fully linked node over links of its own: one link
      // of the GPU's (ranks_per_node - 1) at the channel's speed, not one node's channel plan.
      const double link_gbps = view.intra_gbps / (view.ranks_per_node - 1);
      share = std::min(1.0, std::max(share, nccl_channels(view, 0).per_channel_gbps / link_gbps));
    }
    (view.intra_class == LinkClass::pcie ? priced.links.pcie : priced.links.nvlink) = share;
  }
  // Across nodes an algorithm NCCL has no model for moves the NICs' delivered share (NCCL's own
  // get it in their rate: nccl_call_bus_gbps below, flow_nvls.cc).
  if (!priced.nccl && view.nodes > 1) priced.links.network = view.nic_delivered_share;
  const double bytes = algbw_bytes(r.spec.kind, r.spec.count, r.dtype, n);
  priced.cost.element_bytes = static_cast<double>(size_of(r.dtype));
  priced.cost.wire_bytes_per_byte = protocol_wire_bytes_per_byte(view, r.protocol);
  if (channel_algo(priced.nccl)) {
    // NCCL's protocol factors and caps as wire bytes: busBw over the protocol's bandwidth.
    // At the channels NCCL launches for the call (fewer for small ring/tree calls; a known arch,
    // whose NCCL speeds the channels are), played on the flow's channels at the communicator's
    // busBw.
    const ChannelPlan channels = nccl_channels(view, r.params.channels);
    const ChannelPlan launched =
        view.arch == topo::GpuArch::unknown
            ? channels
            : nccl_launched_channels(view, channels, *priced.nccl, r.protocol, bytes);
    // The rate the call runs at, as analytic's (TCPX's delivered share, tree/LL128's warps).
    const double bus = nccl_call_bus_gbps(view, launched, *priced.nccl, r.protocol, r.spec.kind);
    const double protocol_bw =
        bus * (priced.nccl == NcclAlgo::tree
                   ? nccl_tree_correction(view, r.protocol, r.spec.kind, bytes)
                   : 1.0);
    if (protocol_bw > 0.0) {
      priced.cost.wire_bytes_per_byte = std::max(1.0, channels.bus_gbps / protocol_bw);
    }
  }
  double net_hop_charged_us = 0.0;  // the hop flow charges a transfer across nodes
  if (r.software_latency && n > 1) {
    if (priced.nccl) {  // NCCL's whole latency once, as the analytic model: no hop delays
      const NcclAlgo la = *priced.nccl;
      priced.fixed_latency_s =
          (nccl_latency_us(view, la, r.protocol, r.spec.kind, bytes) +
           pipeline_fills_us(view, la, r.protocol, r.spec.kind,
                             nvls_busiest_channel_bytes(view, la, r.spec.kind, bytes),
                             r.params.channels)) *
          1e-6;
    } else {  // no NCCL model: the ring's base once and a hop on every transfer (what_if_latency.h)
      const WhatIfLatency l = what_if_latency(view, r.protocol, r.spec.kind, bytes);
      priced.fixed_latency_s = l.base_us * 1e-6;
      for (std::size_t c = 0; c < l.hop_us.size(); ++c)
        priced.cost.delay_by_route_class_s[c] = l.hop_us[c] * 1e-6;
      net_hop_charged_us = l.hop(LinkClass::network);
    }
  }
  // A one-step exchange is grouped send/recv (NCCL's all_to_all, gather, scatter and their _v
  // forms): across nodes the net plugin's host time on its messages' completions, as the tuner's
  // analytic time, and the first messages' wait less the network hop flow charged them
  // (network_hop_us: the class's own); p2p_net_messages.h says which kinds and why.
  if (r.software_latency && traits_of(r.algorithm).one_step_exchange) {
    priced.fixed_latency_s += grouped_p2p_net_us(view, r.spec, r.dtype, net_hop_charged_us) * 1e-6;
  }
  if (priced.gpus.perms.empty()) priced.gpus.perms = {tuner.ranks()};
  AlgorithmParams& p = priced.params;
  p = r.params;
  if (p.channels <= 0) {
    p.channels = rotated && view.nodes > 1 && topology.summary().nics_per_node > 0
                     ? std::max(1, view.ranks_per_node)
                     : static_cast<int>(priced.gpus.distinct());  // 1, or one per mesh ring
  }
  // A tree NCCL models (all_reduce) plays as bulk flows (flow_bulk_pipeline.cc); one it did not
  // (none is registered today) would play its steps pipelined in Simple's steps.
  if (p.chunk_elements == 0 && traits_of(priced.schedule).pipelined_tree &&
      priced.nccl != NcclAlgo::tree && n > 1 && r.spec.count > 0) {
    const double half_per_channel =
        std::ceil(static_cast<double>(r.spec.count) / (2.0 * p.channels));
    const double half_bytes = half_per_channel * static_cast<double>(size_of(r.dtype));
    const double cap = std::max(1.0, std::floor(kMaxPipelinedTransfers / (4.0 * n * p.channels)));
    const double pieces = std::clamp(std::ceil(half_bytes / kPipelineChunkBytes), 1.0, cap);
    p.chunk_elements = static_cast<std::size_t>(std::ceil(half_per_channel / pieces));
  }
  return priced;
}

LinkScale platform_links(const topo::Topology& topology, bool software_latency) {
  return LinkScale{.network = network_efficiency(view_of(topology, topology.gpu_count())),
                   .route_latency = route_latency_rule(software_latency)};
}

CallFlows add_call_flows(const Tuner& tuner, const Resolved& r, const PricedCall& priced,
                         RingForm ring, RouteTable& routes, FlowProgram& program) {
  const topo::Topology& topology = tuner.topology();
  const int n = r.spec.nranks;
  const std::size_t first = program.transfers.size();
  CallFlows out;
  out.fixed_latency_s = priced.fixed_latency_s;
  const bool nvls = priced.nccl == NcclAlgo::nvls || priced.nccl == NcclAlgo::nvls_tree;
  const bool bulk_or_rounds = ring != RingForm::steps && traits_of(priced.schedule).ring_rounds &&
                              n > 1 && ring_kind(r.spec.kind);
  if (nvls &&
      program_for_nvls(topology, tuner.view(), r, *priced.nccl, tuner.ranks(), routes, program)) {
    out.bulk = true;  // switch flows, one step per rank
  } else if (bulk_or_rounds && ring == RingForm::rounds) {
    program_for_ring(r.spec, priced.params, priced.cost, routes, program, priced.gpus);
    out.rounds = true;
  } else if (bulk_or_rounds) {
    out.bulk = true;
    out.fixed_latency_s +=
        program_for_bulk_ring(r.spec, priced.params, priced.cost, routes, program, priced.gpus);
  } else if (bulk_pipeline(priced.nccl, r.spec.kind) && n > 1) {
    out.bulk = true;  // every edge at once: the pipeline's steady state (fill: priced)
    out.fixed_latency_s +=
        program_for_bulk_pipeline(build_schedule(r.spec, priced.schedule, priced.params),
                                  priced.cost, routes, program, priced.gpus);
  } else {
    program_from_schedule(build_schedule(r.spec, priced.schedule, priced.params), priced.cost,
                          routes, program, priced.gpus);
  }
  for (std::size_t t = first; t < program.transfers.size(); ++t) {
    FlowTransfer& tr = program.transfers[t];
    tr.played_per_wire_byte = wire_factor(topology, program, tr.route, priced.links);
    tr.bytes *= tr.played_per_wire_byte;
    tr.grouped = priced.grouped_steps;
  }
  return out;
}

}  // namespace twinccl::sim::detail
