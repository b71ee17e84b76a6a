// flow_plan: how the flow fidelity plays one choice of the tuner (tuner_internal.h).
//
// How it works (the rules of flow.cc's flow(), for any communicator's GPUs): latency = NCCL's
// base latency once plus its intra/network hop latency on every transfer by route class
// (nccl_latency_parts; algorithms NCCL has no model for: the ring's Simple ones); NVLS and
// nvls_tree NCCL's whole latency once instead (switch flows, flow_nvls.cc). Wire bytes: ring,
// tree and pat move data x busBw / the protocol's bandwidth (NCCL's LL/LL128 factors and caps). Channels 0 = one per GPU of a node across nodes with NICs (channel c's
// ring entering every node at its GPU c, rail_ranks), 1 inside a node; a tree is pipelined in
// NCCL Simple's 512 KiB steps (fewer pieces past 200k transfers). Rails apply to communicators
// that are GPUs 0..n-1 (a sub-communicator plays every channel on its own GPUs). Link shares as
// flow.cc's link_scale: network links at NCCL's share of a NIC; for ring/tree/pat, NVLink (or
// PCIe) at NCCL's intra-node channels over the GPU's links.
#include <algorithm>
#include <cmath>
#include <optional>

#include "tuner_internal.h"
#include "twinccl/perf_math.h"

namespace twinccl::sim::detail {
namespace {

constexpr double kPipelineChunkBytes = 512.0 * 1024.0;
constexpr double kMaxPipelinedTransfers = 200'000.0;

bool is_prefix(const std::vector<int>& ranks) {
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i] != static_cast<int>(i)) return false;
  }
  return true;
}

}  // namespace

FlowPlan flow_plan(const Tuner& tuner, const Resolved& r) {
  const topo::Topology& topology = tuner.topology();
  const TopologyView& view = tuner.view();
  const int n = r.spec.nranks;
  const std::size_t pi = index_of(r.protocol);
  FlowPlan plan;
  plan.schedule = schedule_algorithm(r.algorithm);
  const std::optional<NcclAlgo> nccl = nccl_algo_for(r.algorithm, r.spec.kind);
  plan.nvls = nccl == NcclAlgo::nvls || nccl == NcclAlgo::nvls_tree;
  plan.links.network = network_efficiency(view);
  if ((nccl == NcclAlgo::ring || nccl == NcclAlgo::tree || nccl == NcclAlgo::pat) &&
      view.intra_gbps > 0.0) {
    TopologyView one_node = view;
    one_node.nodes = 1;
    const double share = std::min(1.0, nccl_channels(one_node, 0).bus_gbps / view.intra_gbps);
    (view.intra_class == LinkClass::pcie ? plan.links.pcie : plan.links.nvlink) = share;
  }
  const double bytes = algbw_bytes(r.spec.kind, r.spec.count, r.dtype, n);
  plan.cost.element_bytes = static_cast<double>(size_of(r.dtype));
  plan.cost.wire_bytes_per_byte = kNccl.wire_bytes_per_byte[pi];
  if (nccl == NcclAlgo::ring || nccl == NcclAlgo::tree || nccl == NcclAlgo::pat) {
    // NCCL's protocol factors and caps as wire bytes: busBw over the protocol's bandwidth.
    const ChannelPlan channels = nccl_channels(view, r.params.channels);
    const double protocol_bw =
        nccl_bus_bandwidth(view, channels, *nccl, r.protocol, r.spec.kind) *
        (nccl == NcclAlgo::tree ? nccl_tree_correction(r.protocol, r.spec.kind, bytes) : 1.0);
    if (protocol_bw > 0.0) {
      plan.cost.wire_bytes_per_byte = std::max(1.0, channels.bus_gbps / protocol_bw);
    }
  }
  if (r.software_latency && n > 1) {
    const NcclAlgo la = latency_algo(nccl);
    if (plan.nvls || la == NcclAlgo::nvls_tree) {  // NCCL's whole latency once, no hop delays
      plan.fixed_latency_s = nccl_latency_us(view, la, r.protocol, r.spec.kind, bytes) * 1e-6;
    } else {
      const LatencyParts l = nccl_latency_parts(view, la, r.protocol, r.spec.kind, bytes);
      plan.fixed_latency_s = l.base_us * 1e-6;
      plan.cost.delay_by_route_class_s = {l.intra_hop_us * 1e-6, l.intra_hop_us * 1e-6,
                                          l.net_hop_us * 1e-6};
    }
  }
  AlgorithmParams& p = plan.params;
  p = r.params;
  if (p.channels <= 0) {
    p.channels = view.nodes > 1 && topology.summary().nics_per_node > 0
                     ? std::max(1, view.ranks_per_node)
                     : 1;
  }
  if (p.chunk_elements == 0 && r.algorithm == "tree" && n > 1 && r.spec.count > 0) {
    const double half_per_channel =
        std::ceil(static_cast<double>(r.spec.count) / (2.0 * p.channels));
    const double half_bytes = half_per_channel * static_cast<double>(size_of(r.dtype));
    const double cap = std::max(1.0, std::floor(kMaxPipelinedTransfers / (4.0 * n * p.channels)));
    const double pieces = std::clamp(std::ceil(half_bytes / kPipelineChunkBytes), 1.0, cap);
    p.chunk_elements = static_cast<std::size_t>(std::ceil(half_per_channel / pieces));
  }
  if (is_prefix(tuner.ranks())) plan.gpus = rail_ranks(topology, n);
  if (plan.gpus.perms.empty()) plan.gpus.perms = {tuner.ranks()};
  return plan;
}

double wire_factor(const topo::Topology& topology, const FlowProgram& program, int route,
                   const LinkScale& links) {
  double line = 0.0, scaled = 0.0;
  for (const FlowHop& hop : program.routes[static_cast<std::size_t>(route)].hops) {
    const FlowLink& l = program.links[static_cast<std::size_t>(hop.link)];
    if (l.fatpipe) continue;
    const topo::LinkType type = topology.link(l.topology_link).type;
    const double scale = type == topo::LinkType::nvlink ? links.nvlink
                         : type == topo::LinkType::pcie ? links.pcie
                                                        : 1.0;
    line = line == 0.0 ? l.bandwidth_bytes_per_s : std::min(line, l.bandwidth_bytes_per_s);
    const double r = l.bandwidth_bytes_per_s * scale;
    scaled = scaled == 0.0 ? r : std::min(scaled, r);
  }
  return scaled > 0.0 ? line / scaled : 1.0;
}

}  // namespace twinccl::sim::detail
