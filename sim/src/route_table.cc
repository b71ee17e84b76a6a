// RouteTable: the topology's routes turned into flow routes, each topology link added once.
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

int RouteTable::route_id(int src, int dst) {
  auto& known = by_src_[static_cast<std::size_t>(src)];
  for (const auto& [d, id] : known) {
    if (d == dst) return id;
  }
  FlowRoute route{.src = src, .dst = dst, .hops = {}, .latency_s = 0.0};
  const std::vector<topo::LinkId> links = topology_.route(src, dst);
  const std::vector<topo::VertexId> vertices = topology_.route_vertices(src, dst);
  int cls = 0;
  for (std::size_t i = 0; i < links.size(); ++i) {
    const topo::Link& l = topology_.link(links[i]);
    route.hops.push_back({link_index(links[i]), l.a == vertices[i]});
    if (l.type == topo::LinkType::network) cls = 2;
    if (l.type == topo::LinkType::pcie && cls == 0) cls = 1;
  }
  route.latency_s = route_latency_us(topology_, links, scale_.route_latency) * 1e-6;
  const int id = static_cast<int>(program_.routes.size());
  program_.routes.push_back(std::move(route));
  route_class_.push_back(cls);
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
    route_class_.push_back(0);
    return route_id;
  }
  return -1;
}

}  // namespace twinccl::sim::detail
