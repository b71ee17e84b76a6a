// TopologyBuilder: collects vertices and links; seal() validates (validate.cc) and derives the
// indexes routing needs (adjacency, ranks, node membership).
#include "twinccl/topologies/builder.h"

#include <utility>

#include "topology_data.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/limits.h"
#include "validate.h"

namespace twinccl::topo {

TopologyBuilder::TopologyBuilder(std::string name) : name_(std::move(name)) {}

TopologyBuilder& TopologyBuilder::description(std::string text) {
  description_ = std::move(text);
  return *this;
}
TopologyBuilder& TopologyBuilder::arch(GpuArch arch) {
  facts_.arch = arch;
  return *this;
}
TopologyBuilder& TopologyBuilder::pcie_gen(int gen) {
  facts_.pcie_gen = gen;
  return *this;
}
TopologyBuilder& TopologyBuilder::memory_gbps(double gbps) {
  facts_.memory_gbps = gbps;
  return *this;
}
TopologyBuilder& TopologyBuilder::network(NetworkClass network) {
  facts_.network = network;
  return *this;
}
TopologyBuilder& TopologyBuilder::host_cpu(HostCpu cpu) {
  facts_.host_cpu = cpu;
  return *this;
}
TopologyBuilder& TopologyBuilder::nvls(bool capable) {
  facts_.nvls = capable;
  return *this;
}
TopologyBuilder& TopologyBuilder::host_launch_us(double us) {
  facts_.host_launch_us = us;
  return *this;
}
TopologyBuilder& TopologyBuilder::nic_ports(int ports) {
  facts_.nic_ports = ports;
  return *this;
}

TopologyBuilder& TopologyBuilder::group_launch_us(double us) {
  facts_.group_launch_us = us;
  return *this;
}
TopologyBuilder& TopologyBuilder::network_hop_extra_us(double us) {
  facts_.network_hop_extra_us = us;
  return *this;
}
TopologyBuilder& TopologyBuilder::nic_delivered_share(double share) {
  facts_.nic_delivered_share = share;
  return *this;
}
TopologyBuilder& TopologyBuilder::nic_share_trend(double per_doubling, int from_nodes) {
  facts_.nic_share_per_doubling = per_doubling;
  facts_.nic_share_nodes = from_nodes;
  return *this;
}
TopologyBuilder& TopologyBuilder::p2p_net_chunk_bytes(double bytes) {
  facts_.p2p_net_chunk_bytes = bytes;
  return *this;
}
TopologyBuilder& TopologyBuilder::nccl_buffsize_bytes(double bytes) {
  facts_.nccl_buffsize_bytes = bytes;
  return *this;
}
TopologyBuilder& TopologyBuilder::facts(const TopologyFacts& facts) {
  facts_ = facts;
  return *this;
}

VertexId TopologyBuilder::add_vertex(VertexSpec spec) {
  if (vertices_.size() >= static_cast<std::size_t>(limits::max_vertices)) {
    throw ConfigError("topology '" + name_.substr(0, limits::max_echo_bytes) + "': more than " +
                      std::to_string(limits::max_vertices) + " vertices (the cap)");
  }
  const auto id = static_cast<VertexId>(vertices_.size());
  Vertex v;
  v.name = std::move(spec.name);
  v.kind = spec.kind;
  v.node = spec.node;
  v.rank = spec.kind == VertexKind::gpu ? (spec.rank >= 0 ? spec.rank : gpus_added_) : -1;
  v.forwards = spec.forwards.value_or(spec.kind != VertexKind::gpu);
  v.physical_switches = spec.physical_switches;
  v.level = spec.level;
  v.radix = spec.radix;
  v.port_bandwidth_gbps = spec.port_bandwidth_gbps;
  if (spec.kind == VertexKind::gpu) ++gpus_added_;
  const auto kind = static_cast<std::size_t>(spec.kind);
  std::array<int, 6>& counts = kind_counts_[spec.node];  // a map: node may be any int here
  v.local_index = spec.local_index >= 0 ? spec.local_index : counts[kind];
  ++counts[kind];
  if (!names_.emplace(v.name, id).second && duplicate_name_.empty()) duplicate_name_ = v.name;
  vertices_.push_back(std::move(v));
  return id;
}

VertexId TopologyBuilder::add_gpu(std::string name, int node, int rank) {
  return add_vertex({.kind = VertexKind::gpu, .name = std::move(name), .node = node, .rank = rank});
}

VertexId TopologyBuilder::add_switch(VertexKind kind, std::string name, int node) {
  return add_vertex({.kind = kind, .name = std::move(name), .node = node});
}

VertexId TopologyBuilder::add_cpu(std::string name, int node) {
  return add_vertex({.kind = VertexKind::cpu, .name = std::move(name), .node = node});
}

VertexId TopologyBuilder::add_nic(std::string name, int node, double port_bandwidth_gbps) {
  return add_vertex({.kind = VertexKind::nic,
                     .name = std::move(name),
                     .node = node,
                     .port_bandwidth_gbps = port_bandwidth_gbps});
}

TopologyBuilder& TopologyBuilder::connect(VertexId a, VertexId b, const LinkSpec& spec) {
  if (links_.size() >= static_cast<std::size_t>(limits::max_links)) {
    throw ConfigError("topology '" + name_.substr(0, limits::max_echo_bytes) + "': more than " +
                      std::to_string(limits::max_links) + " links (the cap)");
  }
  links_.push_back(Link{.a = a,
                        .b = b,
                        .type = spec.type,
                        .bandwidth_gbps = spec.bandwidth_gbps,
                        .latency_us = spec.latency_us,
                        .duplex = spec.duplex,
                        .sharing = spec.sharing,
                        .lanes = spec.lanes});
  return *this;
}

TopologyBuilder& TopologyBuilder::connect(std::string_view a, std::string_view b,
                                          const LinkSpec& spec) {
  const auto lookup = [&](std::string_view which, std::string_view end) {
    const auto id = find(which);
    if (!id) {
      throw ConfigError("topology '" + name_ + "': link " + std::to_string(links_.size()) + " (" +
                        std::string(a) + " <-> " + std::string(b) + "): " + std::string(end) +
                        " '" + std::string(which) + "' is not a vertex");
    }
    return *id;
  };
  const VertexId va = lookup(a, "a");
  const VertexId vb = lookup(b, "b");
  return connect(va, vb, spec);
}

std::optional<VertexId> TopologyBuilder::find(std::string_view name) const {
  const auto it = names_.find(name);
  if (it == names_.end()) return std::nullopt;
  return it->second;
}

Topology TopologyBuilder::seal() {
  auto data = std::make_shared<TopologyData>();
  data->name = std::move(name_);
  data->description = std::move(description_);
  data->facts = facts_;
  data->vertices = std::move(vertices_);
  data->links = std::move(links_);
  const std::string duplicate = std::move(duplicate_name_);
  *this = TopologyBuilder(data->name);

  if (!duplicate.empty()) {
    throw ConfigError("topology '" + data->name.substr(0, limits::max_echo_bytes) +
                      "': vertex name '" + duplicate.substr(0, limits::max_echo_bytes) +
                      "' is used twice (names must be unique)");
  }
  validate_vertices(*data);
  validate_links(*data);
  index_topology(*data);
  validate_facts(*data);
  validate_connected(*data);
  data->router = std::make_unique<Router>(*data);
  return Topology(std::move(data));
}

}  // namespace twinccl::topo
