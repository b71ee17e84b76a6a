// Topology accessors, routes, names of the enums and the link-speed tables.
#include "twinccl/topologies/topology.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <utility>

#include "topology_data.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/limits.h"

namespace twinccl::topo {
namespace {

template <typename Enum, std::size_t N>
std::optional<Enum> parse_from(const std::array<std::pair<Enum, std::string_view>, N>& names,
                               std::string_view text) {
  for (const auto& [value, name] : names) {
    if (name == text) return value;
  }
  return std::nullopt;
}

template <typename Enum, std::size_t N>
std::vector<std::string_view> names_of(
    const std::array<std::pair<Enum, std::string_view>, N>& names) {
  std::vector<std::string_view> out;
  for (const auto& entry : names) out.push_back(entry.second);
  return out;
}

template <typename Enum, std::size_t N>
std::string_view name_of(const std::array<std::pair<Enum, std::string_view>, N>& names,
                         Enum value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return "?";
}

constexpr std::array<std::pair<VertexKind, std::string_view>, 6> kVertexKinds{{
    {VertexKind::gpu, "gpu"},
    {VertexKind::nvswitch, "nvswitch"},
    {VertexKind::pcie_switch, "pcie_switch"},
    {VertexKind::cpu, "cpu"},
    {VertexKind::nic, "nic"},
    {VertexKind::network_switch, "network_switch"},
}};
constexpr std::array<std::pair<LinkType, std::string_view>, 5> kLinkTypes{{
    {LinkType::nvlink, "nvlink"},
    {LinkType::pcie, "pcie"},
    {LinkType::network, "network"},
    {LinkType::switch_internal, "switch_internal"},
    {LinkType::cpu_interconnect, "cpu_interconnect"},
}};
constexpr std::array<std::pair<Duplex, std::string_view>, 2> kDuplex{{
    {Duplex::full, "full"},
    {Duplex::half, "half"},
}};
constexpr std::array<std::pair<Sharing, std::string_view>, 2> kSharing{{
    {Sharing::shared, "shared"},
    {Sharing::fatpipe, "fatpipe"},
}};
constexpr std::array<std::pair<GpuArch, std::string_view>, 6> kArch{{
    {GpuArch::unknown, "unknown"},
    {GpuArch::ampere, "ampere"},
    {GpuArch::hopper, "hopper"},
    {GpuArch::blackwell, "blackwell"},
    {GpuArch::cdna3, "cdna3"},
    {GpuArch::cdna4, "cdna4"},
}};
constexpr std::array<std::pair<NetworkClass, std::string_view>, 8> kNetworks{{
    {NetworkClass::infiniband, "infiniband"},
    {NetworkClass::roce, "roce"},
    {NetworkClass::efa, "efa"},
    {NetworkClass::tcpxo, "tcpxo"},
    {NetworkClass::efa_v3, "efa-v3"},
    {NetworkClass::efa_sendrecv, "efa-sendrecv"},
    {NetworkClass::tcpx, "tcpx"},
    {NetworkClass::roce_gib, "roce-gib"},
}};
constexpr std::array<std::pair<HostCpu, std::string_view>, 3> kHostCpus{{
    {HostCpu::x86, "x86"},
    {HostCpu::x86_amd, "x86-amd"},
    {HostCpu::arm, "arm"},
}};

}  // namespace

Topology::Topology(std::shared_ptr<const TopologyData> data) : data_(std::move(data)) {
  if (!data_ || !data_->router) throw InternalError("Topology built from unsealed data");
}

const std::string& Topology::name() const { return data_->name; }
const std::string& Topology::description() const { return data_->description; }
const TopologyFacts& Topology::facts() const { return data_->facts; }
double nic_share_trend_factor(const TopologyFacts& facts, int nodes) {
  if (facts.nic_share_per_doubling == 0.0 || facts.nic_share_nodes <= 0 || nodes <= 0) return 1.0;
  return std::pow(1.0 + facts.nic_share_per_doubling,
                  std::log2(static_cast<double>(nodes) / facts.nic_share_nodes));
}

double nic_share_at_nodes(const TopologyFacts& facts, int nodes, double share) {
  if (facts.nic_share_per_doubling == 0.0) return share;
  return std::clamp(share * nic_share_trend_factor(facts, nodes), limits::min_nic_delivered_share,
                    limits::max_nic_delivered_share);
}

std::span<const Vertex> Topology::vertices() const { return data_->vertices; }
std::span<const Link> Topology::links() const { return data_->links; }

const Vertex& Topology::vertex(VertexId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= data_->vertices.size()) {
    throw InvalidArgument("topology '" + data_->name + "': vertex id " + std::to_string(id) +
                          " out of range (" + std::to_string(data_->vertices.size()) +
                          " vertices)");
  }
  return data_->vertices[static_cast<std::size_t>(id)];
}

const Link& Topology::link(LinkId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= data_->links.size()) {
    throw InvalidArgument("topology '" + data_->name + "': link id " + std::to_string(id) +
                          " out of range (" + std::to_string(data_->links.size()) + " links)");
  }
  return data_->links[static_cast<std::size_t>(id)];
}

std::optional<VertexId> Topology::find(std::string_view vertex_name) const {
  const auto it = data_->by_name.find(vertex_name);
  if (it == data_->by_name.end()) return std::nullopt;
  return it->second;
}

std::span<const LinkId> Topology::links_of(VertexId id) const {
  vertex(id);  // range check
  return data_->links_of[static_cast<std::size_t>(id)];
}

VertexId Topology::other_end(LinkId link_id, VertexId from) const {
  const Link& l = link(link_id);
  if (l.a == from) return l.b;
  if (l.b == from) return l.a;
  throw InvalidArgument("topology '" + data_->name + "': link " + std::to_string(link_id) +
                        " does not touch vertex " + std::to_string(from));
}

int Topology::gpu_count() const { return static_cast<int>(data_->gpu_by_rank.size()); }
int Topology::node_count() const { return data_->node_count; }

VertexId Topology::gpu(int rank) const {
  if (rank < 0 || rank >= gpu_count()) {
    throw InvalidArgument("topology '" + data_->name + "': GPU rank " + std::to_string(rank) +
                          " out of range (" + std::to_string(gpu_count()) + " GPUs)");
  }
  return data_->gpu_by_rank[static_cast<std::size_t>(rank)];
}

std::vector<VertexId> Topology::node_vertices(int node) const {
  if (node < 0 || node >= data_->node_count) {
    throw InvalidArgument("topology '" + data_->name + "': node " + std::to_string(node) +
                          " out of range (" + std::to_string(data_->node_count) + " nodes)");
  }
  return data_->node_members[static_cast<std::size_t>(node)];
}

std::vector<LinkId> Topology::route(int rank_a, int rank_b) const {
  gpu(rank_a);
  gpu(rank_b);
  return data_->router->route(rank_a, rank_b);
}

std::vector<VertexId> Topology::route_vertices(int rank_a, int rank_b) const {
  std::vector<VertexId> out{gpu(rank_a)};
  for (LinkId l : route(rank_a, rank_b)) out.push_back(other_end(l, out.back()));
  return out;
}

std::optional<VertexId> Topology::home_nic(int rank) const {
  gpu(rank);
  return data_->router->home_nic(rank);
}

RouteMetrics measure(const Topology& topology, std::span<const LinkId> route) {
  RouteMetrics m;
  for (LinkId id : route) {
    const Link& l = topology.link(id);
    m.bottleneck_bandwidth_gbps =
        m.hops == 0 ? l.bandwidth_gbps : std::min(m.bottleneck_bandwidth_gbps, l.bandwidth_gbps);
    m.latency_us += l.latency_us;
    ++m.hops;
  }
  return m;
}

std::string_view routing_rule() {
  return "shortest path by hop count, then by summed latency; GPUs are endpoints and are passed "
         "through only when they forward (torus); same node: the path stays inside the node; "
         "different nodes: GPU -> its home NIC (nearest NIC, ties to the NIC on the GPU's rail) "
         "-> network switches -> the destination's home NIC -> GPU; among equal-cost next hops, "
         "in link order, number (key mod count) is taken, key = destination node index in the "
         "network and destination rank elsewhere (ECMP by destination, repeatable); when no such "
         "route exists: shortest path over the whole graph";
}

std::string_view to_string(VertexKind kind) { return name_of(kVertexKinds, kind); }
std::string_view to_string(LinkType type) { return name_of(kLinkTypes, type); }
std::string_view to_string(Duplex duplex) { return name_of(kDuplex, duplex); }
std::string_view to_string(Sharing sharing) { return name_of(kSharing, sharing); }
std::string_view to_string(GpuArch arch) { return name_of(kArch, arch); }
std::string_view to_string(NetworkClass network) { return name_of(kNetworks, network); }
std::string_view to_string(HostCpu cpu) { return name_of(kHostCpus, cpu); }
std::optional<VertexKind> parse_vertex_kind(std::string_view t) {
  return parse_from(kVertexKinds, t);
}
std::optional<LinkType> parse_link_type(std::string_view t) { return parse_from(kLinkTypes, t); }
std::optional<Duplex> parse_duplex(std::string_view t) { return parse_from(kDuplex, t); }
std::optional<Sharing> parse_sharing(std::string_view t) { return parse_from(kSharing, t); }
std::optional<GpuArch> parse_gpu_arch(std::string_view t) { return parse_from(kArch, t); }
std::optional<NetworkClass> parse_network_class(std::string_view t) {
  return parse_from(kNetworks, t);
}
std::optional<HostCpu> parse_host_cpu(std::string_view t) { return parse_from(kHostCpus, t); }
std::vector<std::string_view> network_class_names() { return names_of(kNetworks); }
std::vector<std::string_view> host_cpu_names() { return names_of(kHostCpus); }

double device_memory_gbps(GpuArch arch) {
  switch (arch) {
    case GpuArch::ampere:  // NVIDIA A100 data sheet: 80GB SXM 2,039 GB/s (40GB: 1,555)
      return 2039.0;
    case GpuArch::hopper:  // NVIDIA H100 data sheet: SXM 3.35 TB/s (H200: 4.8, a fact)
      return 3350.0;
    case GpuArch::blackwell:  // NVIDIA DGX B200 data sheet: 64 TB/s for 8 GPUs
      return 8000.0;
    case GpuArch::cdna3:  // AMD Instinct MI300X data sheet: 5.3 TB/s
      return 5300.0;
    case GpuArch::cdna4:  // AMD Instinct MI355X (and MI350X): 8 TB/s HBM3E
      return 8000.0;
    case GpuArch::unknown:
      return 0.0;
  }
  return 0.0;
}

double nvlink_link_bandwidth_gbps(GpuArch arch) {
  // NCCL's per-link NVLink bandwidths (../shared/reference/nccl-facts.md, "Links").
  switch (arch) {
    case GpuArch::ampere:
      return 20.0;
    case GpuArch::hopper:
      return 20.6;
    case GpuArch::blackwell:
      return 40.1;
    case GpuArch::cdna3:  // RCCL's xGMI figure for gfx94x (ROCm/rccl issue 1210)
      return 48.0;
    case GpuArch::cdna4:
      // MI355X: AMD's single-node reference, all_reduce busbw 390 GB/s at 8 GiB (ROCm/cvs@e241bd4
      // input/config_file/rccl/single_node_mi355_rccl.json), over the 7 links RCCL's one-node
      // rings load evenly (sim topology_view.cc): 55.7 GB/s of the 76.8 raw (0.73; MI300X 0.75).
      return 390.0 / 7.0;
    case GpuArch::unknown:
      return 0.0;
  }
  return 0.0;
}

double pcie_bandwidth_gbps(int gen, int lanes) {
  if (gen < 1 || gen > 6) {
    throw InvalidArgument("PCIe generation must be 1..6, got " + std::to_string(gen));
  }
  // NCCL counts 15, 30, 60, 120, 240, 480 x 100 Mb/s per lane for gen 1..6.
  const double per_lane_gbps = 0.1875 * static_cast<double>(1 << (gen - 1));
  return per_lane_gbps * lanes;
}

}  // namespace twinccl::topo
