// The part of a route's link latency that NCCL's per-hop latencies do not already hold.
//
// How it works. NCCL's per-hop latencies (tuning.cc hwLat: NVLink, PCIe and network figures per
// algorithm and protocol) are measured GPU to GPU: one NVLink/PCIe hop through the node's switches
// (GPU -> NVSwitch -> GPU, or GPU -> PCIe switch [-> CPU -> CPU -> PCIe switch] -> GPU), or one
// network hop through the NICs and the leaf switch they share (GPU -> PCIe -> NIC -> leaf -> NIC ->
// PCIe -> GPU). A call priced with them (software latency on) is charged those per transfer, so
// the links of such a hop are not charged again (the flow model used to add the topology's link
// latencies on top: +30% at 32 KiB across 2-4 nodes). What NCCL's figure does not hold, and is
// still charged at the topology's link latency:
// * a link between two network switches (a fat-tree's leaf <-> spine tier): NCCL's network figure
//   is one figure for any pair of nodes, and a route through the spine crosses two more switches
//   than one through a shared leaf;
// * on fabrics where GPUs forward for each other (a torus), every GPU-to-GPU link after the
//   route's first: NCCL's hop is one link between two GPUs.
// * on the links NCCL's hop does hold, what a link takes beyond the latency NCCL's figure was
//   measured with (the presets' figures, PresetLatencies: network 1 us, NVLink 0.2, PCIe 0.25,
//   CPU interconnect 0.3): a what-if `--set network_latency_us=20` or a topology file's slower
//   link is charged its excess (19 us per network link), the presets' own links nothing.
// Example, h100-cluster-64 (1 us per network link): nodes 0 and 1 (one leaf per rail): 0 us;
// nodes 0 and 32 (leaf -> spine -> leaf): 2 us. 4x4 torus, GPU 0 to GPU 2 (two links): one link's.
#include "route_latency.h"

#include <algorithm>

#include "twinccl/topologies/presets.h"

namespace twinccl::sim::detail {
namespace {

bool is_network_switch(const topo::Topology& t, topo::VertexId v) {
  return t.vertex(v).kind == topo::VertexKind::network_switch;
}
bool is_gpu(const topo::Topology& t, topo::VertexId v) {
  return t.vertex(v).kind == topo::VertexKind::gpu;
}

// The latency of a link of this type that NCCL's measured hop figures already hold.
double held_by_nccl_us(topo::LinkType type) {
  using topo::PresetLatencies;
  switch (type) {
    case topo::LinkType::network:
      return PresetLatencies::network_us;
    case topo::LinkType::nvlink:
      return PresetLatencies::nvlink_us;
    case topo::LinkType::pcie:
      return PresetLatencies::pcie_us;
    case topo::LinkType::cpu_interconnect:
      return PresetLatencies::cpu_interconnect_us;
    case topo::LinkType::switch_internal:
      return 0.0;
  }
  return 0.0;
}

}  // namespace

LinkClass route_link_class(const topo::Topology& topology, std::span<const topo::LinkId> links) {
  LinkClass cls = LinkClass::nvlink;
  for (topo::LinkId id : links) {
    const topo::LinkType type = topology.link(id).type;
    if (type == topo::LinkType::network) return LinkClass::network;
    if (type == topo::LinkType::pcie) cls = LinkClass::pcie;
  }
  return cls;
}

double route_latency_us(const topo::Topology& topology, std::span<const topo::LinkId> links,
                        RouteLatency which) {
  double us = 0.0;
  int gpu_links = 0;
  for (const topo::LinkId id : links) {
    const topo::Link& l = topology.link(id);
    if (which == RouteLatency::all) {
      us += l.latency_us;
    } else if (which == RouteLatency::beyond_nccl_hop) {
      const bool spine = is_network_switch(topology, l.a) && is_network_switch(topology, l.b);
      const bool forwarded = is_gpu(topology, l.a) && is_gpu(topology, l.b) && gpu_links++ > 0;
      us +=
          spine || forwarded ? l.latency_us : std::max(0.0, l.latency_us - held_by_nccl_us(l.type));
    }
  }
  return us;
}

double pair_route_latency_us(const topo::Topology& topology, int src, int dst,
                             std::span<const topo::LinkId> links, RouteLatency which) {
  const double direct_us = route_latency_us(topology, links, which);
  if (which != RouteLatency::beyond_nccl_hop || direct_us <= 0.0) return direct_us;
  const topo::Vertex& s = topology.vertex(topology.gpu(src));
  const topo::Vertex& d = topology.vertex(topology.gpu(dst));
  if (s.node < 0 || s.node == d.node || s.local_index == d.local_index) return direct_us;
  int proxy = -1;  // the GPU of src's node on dst's rail (the same local index)
  for (topo::VertexId id : topology.node_vertices(s.node)) {
    const topo::Vertex& g = topology.vertex(id);
    if (g.kind == topo::VertexKind::gpu && g.local_index == d.local_index) proxy = g.rank;
  }
  if (proxy < 0) return direct_us;
  for (topo::LinkId id : topology.route(src, proxy)) {  // NVLink (or xGMI) inside the node only
    const topo::LinkType t = topology.link(id).type;
    if (t != topo::LinkType::nvlink && t != topo::LinkType::switch_internal) return direct_us;
  }
  return std::min(direct_us, route_latency_us(topology, topology.route(proxy, dst), which));
}

}  // namespace twinccl::sim::detail
