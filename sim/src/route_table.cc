// RouteTable: the topology's routes turned into flow routes, each topology link added once.
//
// Route latency across rails (PXN). A flow ring enters a node at its GPU c and leaves from GPU
// c - 1 (rails.cc), so its hop to the next node runs NIC c - 1 -> leaf -> spine -> leaf -> NIC c on
// a rail-optimized fat-tree. NCCL's ring enters and leaves a node through the same NIC, and its
// PXN (on by default since 2.12) hands a cross-rail message over NVLink to the GPU on the
// destination's rail, whose NIC sends it within one rail's leaf: no spine. The bytes are priced on
// the topology's route (each rail still carries one channel per direction; a relay's extra NVLink
// hop is left out: at NCCL's 20.6 GB/s per H100 link it would bind below the NICs, which the
// hardware's 25 does not), and the latency on the relay's: when the source's node has a
// GPU with the destination's local index, a software-latency route is charged the lower of the
// two routes' latencies (route_latency.h); on an NVLink/xGMI path to that GPU only (RCCL counts
// xGMI as NVLink: MI300X boxes relay over it too). h100-cluster-2 all_gather 64 MiB, step playback:
// 15 ring steps x 2 us of spine were +12.8% against analytic.
#include <algorithm>
#include <cstddef>
#include <span>

#include "flow_program.h"

namespace twinccl::sim::detail {

RouteTable::RouteTable(const topo::Topology& topology, FlowProgram& program, LinkScale scale)
    : topology_(topology),
      program_(program),
      link_index_(topology.links().size(), -1),
      by_src_(static_cast<std::size_t>(program.nranks)),
      scale_(scale) {}

int RouteTable::link_index(topo::LinkId id) {
  int& index = link_index_[static_cast<std::size_t>(id)];
  if (index < 0) {
    const topo::Link& l = topology_.link(id);
    index = static_cast<int>(program_.links.size());
    const double efficiency = l.type == topo::LinkType::network  ? scale_.network
                              : l.type == topo::LinkType::nvlink ? scale_.nvlink
                              : l.type == topo::LinkType::pcie   ? scale_.pcie
                                                                 : 1.0;
    program_.links.push_back(
        {.topology_link = id,
         .bandwidth_bytes_per_s = l.bandwidth_gbps * efficiency * 1e9,
         // SimGrid charges the route's latency (below), not this.
         .latency_s = scale_.route_latency == RouteLatency::all ? l.latency_us * 1e-6 : 0.0,
         .fatpipe = l.sharing == topo::Sharing::fatpipe,
         .full_duplex = l.duplex == topo::Duplex::full});
  }
  return index;
}

double RouteTable::route_latency_s(int src, int dst, const std::vector<topo::LinkId>& links) {
  return pair_route_latency_us(topology_, src, dst, links, scale_.route_latency) * 1e-6;
}

int RouteTable::route_id(int src, int dst) {
  auto& known = by_src_[static_cast<std::size_t>(src)];
  for (const auto& [d, id] : known) {
    if (d == dst) return id;
  }
  FlowRoute route{.src = src, .dst = dst, .hops = {}, .latency_s = 0.0};
  const std::vector<topo::LinkId> links = topology_.route(src, dst);
  const std::vector<topo::VertexId> vertices = topology_.route_vertices(src, dst);
  for (std::size_t i = 0; i < links.size(); ++i) {
    route.hops.push_back({link_index(links[i]), topology_.link(links[i]).a == vertices[i]});
  }
  route.latency_s = route_latency_s(src, dst, links);
  const int id = static_cast<int>(program_.routes.size());
  program_.routes.push_back(std::move(route));
  route_class_.push_back(route_link_class(topology_, links));
  known.emplace_back(dst, id);
  return id;
}

int RouteTable::switch_route(int rank, bool up) {
  const topo::VertexId gpu = topology_.gpu(rank);
  for (topo::LinkId id : topology_.links_of(gpu)) {
    const topo::Link& l = topology_.link(id);
    const topo::VertexId other = l.a == gpu ? l.b : l.a;
    if (topology_.vertex(other).kind != topo::VertexKind::nvswitch) continue;
    int host = -1;
    for (const auto& [vertex, h] : switch_host_) {
      if (vertex == other) host = h;
    }
    if (host < 0) {
      host = program_.nranks + program_.switch_hosts++;
      switch_host_.emplace_back(other, host);
    }
    FlowRoute route{.src = up ? rank : host, .dst = up ? host : rank, .hops = {}, .latency_s = 0.0};
    route.hops.push_back({link_index(id), (l.a == gpu) == up});
    route.latency_s = route_latency_us(topology_, std::span(&id, 1), scale_.route_latency) * 1e-6;
    const int route_id = static_cast<int>(program_.routes.size());
    program_.routes.push_back(std::move(route));
    route_class_.push_back(LinkClass::nvlink);
    return route_id;
  }
  return -1;
}

}  // namespace twinccl::sim::detail
