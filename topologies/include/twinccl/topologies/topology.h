// Topology: an immutable graph of GPUs, switches, CPUs and NICs joined by links, with routes.
//
//   topo::Topology t = topo::load_topology("h100-cluster-4");   // presets.h
//   std::vector<topo::LinkId> r = t.route(/*rank*/ 0, /*rank*/ 8);
//   double gbps = topo::measure(t, r).bottleneck_bandwidth_gbps;  // 48: PCIe gen5 x16 to the NIC
//
// Units: bandwidth in GB/s (1e9 bytes/s) per direction, latency in microseconds.
// Build one with TopologyBuilder (builder.h), a preset (presets.h), or a file (topology_file.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace twinccl::topo {

using VertexId = int;  // index into Topology::vertices()
using LinkId = int;    // index into Topology::links()

enum class VertexKind { gpu, nvswitch, pcie_switch, cpu, nic, network_switch };
enum class LinkType { nvlink, pcie, network, switch_internal, cpu_interconnect };
// full: each direction has bandwidth_gbps on its own; half: both directions share it.
enum class Duplex { full, half };
// As SimGrid's link sharing policies: shared splits bandwidth among the flows crossing the link;
// fatpipe gives every flow the whole bandwidth (a switch backplane that is never the bottleneck).
enum class Sharing { shared, fatpipe };
// cdna3: AMD Instinct MI300X / MI325X (gfx942); cdna4: MI350X / MI355X (gfx950). Their GPU-GPU
// links are xGMI (Infinity Fabric), drawn as the nvlink link type, and they have no NVLS.
enum class GpuArch { unknown, ampere, hopper, blackwell, cdna3, cdna4 };
// An AMD Instinct GPU (cdna3, cdna4): xGMI links, RCCL's model.
constexpr bool is_amd(GpuArch arch) { return arch == GpuArch::cdna3 || arch == GpuArch::cdna4; }
// The scale-out network between nodes, for its per-message cost (sim/src/network_class.h):
// infiniband (NCCL's IB transport, NCCL's own latencies), roce (the same IB verbs transport over
// Ethernet), efa (AWS Elastic Fabric Adapter, SRD, through the aws-ofi-nccl plugin: p5/p5e's
// EFAv2), efa_v3 (p5en's EFAv3 and p6-b200's EFAv4, one platform of the plugin), efa_sendrecv
// (p4d/p4de's EFA v1, the plugin's send/recv protocol), tcpxo / tcpx (GCP GPUDirect-TCPXO on A3
// Mega, GPUDirect-TCPX on A3 High: NCCL's net plugins over TCP), roce_gib (GCP's RoCE on A3 Ultra
// and A4 through Google's gIB plugin, with GCP's NCCL environment).
enum class NetworkClass { infiniband, roce, efa, tcpxo, efa_v3, efa_sendrecv, tcpx, roce_gib };
// The host CPUs, as NCCL's topology reads them (graph/topo.h NCCL_TOPO_CPU_ARCH_* and, on x86,
// NCCL_TOPO_CPU_VENDOR_*): x86 (an Intel Xeon host, or one whose vendor is not stated), x86_amd
// (an AMD EPYC host) or arm (Grace, as in GB200/GB300 racks). NCCL's tuning model prices
// Blackwell's NVLS-tree differently on x86 (sim/src/nvls_tree_correction.cc) and a network post
// at 2 us on AMD x86 hosts where it takes 1 on the others (getNetOverhead,
// sim/src/analytic_nccl.cc).
enum class HostCpu { x86, arm, x86_amd };
constexpr bool is_x86(HostCpu cpu) { return cpu != HostCpu::arm; }

struct Vertex {
  std::string name;  // unique in the topology, e.g. "n3.gpu5"
  VertexKind kind = VertexKind::gpu;
  int node = -1;         // node (server) index; -1 for network switches shared by all nodes
  int rank = -1;         // gpu: global rank order (0..gpus-1); -1 otherwise
  int local_index = -1;  // index among vertices of this kind in its node (gpu: local GPU index)
  bool forwards = true;  // routes may pass through it (GPUs do not, unless a torus says so)
  int physical_switches = 1;         // nvswitch: physical NVSwitch chips this vertex stands for
  int level = 0;                     // network_switch: 1 leaf, 2 spine, ... (0 = unknown)
  int radix = 0;                     // network_switch: physical ports (0 = unknown)
  double port_bandwidth_gbps = 0.0;  // nic: line rate of its network port, per direction
};

struct Link {
  VertexId a = -1, b = -1;
  LinkType type = LinkType::pcie;
  double bandwidth_gbps = 0.0;  // per direction (full duplex) or for both together (half)
  double latency_us = 0.0;      // one traversal
  Duplex duplex = Duplex::full;
  Sharing sharing = Sharing::shared;
  int lanes = 1;  // physical links bundled (nvlink: NVLinks; pcie: lanes x1..x16)
};

// NCCL's own values of the two NCCL settings TopologyFacts holds, used where a fact is 0 (read in
// NVIDIA/nccl v2.27.7-1 src/init.cc: NCCL_P2P_NET_CHUNKSIZE's default 1 << 17, DEFAULT_BUFFSIZE
// 1 << 22). The one copy the model, `topo describe` and `--set`'s help read.
inline constexpr double kNcclDefaultP2pNetChunkBytes = 131072;  // 128 KiB
inline constexpr double kNcclDefaultBuffsizeBytes = 4194304;    // 4 MiB

// Facts about the machine that the graph alone does not say.
struct TopologyFacts {
  GpuArch arch = GpuArch::unknown;
  int pcie_gen = 0;            // 0 = unknown
  std::optional<bool> nvls{};  // NVLink SHARP; unset = Hopper or newer with an NVSwitch
  // One GPU's device memory (HBM) bandwidth, GB/s, the vendor's figure; 0 = the arch's
  // (device_memory_gbps). A one-rank collective is a local copy at this speed.
  double memory_gbps = 0.0;
  NetworkClass network = NetworkClass::infiniband;  // between nodes (none matters inside one)
  HostCpu host_cpu = HostCpu::x86;
  // The latency regime's two host and network figures a user calibrates (`twinccl calibrate`,
  // `--set`); 0 = the model's own (sim/src/host_launch.h, sim/src/network_class.h).
  double host_launch_us = 0.0;        // one call's host time above its kernels, one GPU per process
  double group_launch_us = 0.0;       // per GPU when one thread launches several (nccl-tests -g N)
  double network_hop_extra_us = 0.0;  // added to every network hop's latency (may be negative)
  // The share of the NICs' rate a call moves across nodes, of what NCCL prices it at; 0 = the
  // network class's (1; TCPX 0.85: sim/src/network_class.h). NCCL ranks at the full rate.
  double nic_delivered_share = 0.0;
  // How that share moves with the node count where `twinccl calibrate --scale-trend` fitted a
  // trend: the share is nic_delivered_share at nic_share_nodes nodes and is multiplied by
  // (1 + nic_share_per_doubling) for every doubling of the topology's nodes beyond them (fewer:
  // divided), within the share's limits; 0 = no trend (sim: nic_delivered_share).
  double nic_share_per_doubling = 0.0;
  int nic_share_nodes = 0;  // the node count nic_delivered_share holds at (with a trend)
  // The RDMA devices one NIC card presents (its ports, each a device of its own: OCI's A100
  // shapes show 16 x 100G devices on 8 x 200G cards); NCCL fuses a card's ports into one network
  // device (IB / RoCE from 2.20.3, other networks from 2.24; sim/src/topology_view.cc nccl_nets).
  // 0 = 1.
  int nic_ports = 0;
  // The run's NCCL environment a grouped send/recv (alltoall) across nodes follows
  // (sim/src/p2p_net_messages.h); 0 = not set here: the network's export (aws-ofi-nccl's on EFA),
  // else NCCL's default (network_nccl_env.h nccl_buffsize, nccl_p2p_net_chunk).
  double p2p_net_chunk_bytes = 0.0;  // NCCL_P2P_NET_CHUNKSIZE (default 128 KiB)
  double nccl_buffsize_bytes = 0.0;  // NCCL_BUFFSIZE (default 4 MiB): a p2p chunk <= it / 8
};

// What the facts' share trend multiplies the NICs' delivered share by on `nodes` nodes:
// (1 + nic_share_per_doubling) ^ log2(nodes / nic_share_nodes); 1 without a trend. The share it
// multiplies, and its limits, are the simulator's (sim: nic_delivered_share).
double nic_share_trend_factor(const TopologyFacts& facts, int nodes);
// `share` (the delivered share at nic_share_nodes) moved to `nodes` by that trend, within the
// share's limits (a network moves no more than its line rate); `share` itself without a trend.
double nic_share_at_nodes(const TopologyFacts& facts, int nodes, double share);

// The numbers the analytic timing model needs, taken from the graph and the facts.
// Per-GPU and per-NIC values are the minimum over all GPUs / NICs (presets are uniform).
struct TopologySummary {
  std::string name;
  GpuArch arch = GpuArch::unknown;
  int nodes = 0;
  int gpus = 0;
  int gpus_per_node = 0;        // the largest node's GPU count
  bool uniform_nodes = true;    // every node has gpus_per_node GPUs
  int nvswitches_per_node = 0;  // physical NVSwitch chips in node of rank 0
  bool nvls_capable = false;
  int nvlinks_per_gpu = 0;                // NVLinks (lanes) of one GPU
  double nvlink_link_bandwidth_gbps = 0;  // one NVLink, one direction
  double nvlink_bandwidth_gbps = 0;       // all NVLinks of one GPU, one direction
  int pcie_gen = 0;
  double memory_gbps = 0;  // one GPU's device memory (facts', else the arch's)
  NetworkClass network = NetworkClass::infiniband;
  double host_launch_us = 0;        // the facts' (0 = the model's own)
  double group_launch_us = 0;       // the facts' (0 = the model's own)
  double network_hop_extra_us = 0;  // the facts'
  double nic_delivered_share = 0;   // the facts' (0 = the network class's)
  double p2p_net_chunk_bytes = 0;   // the facts' (0 = not set: the network's export, else NCCL's)
  double nccl_buffsize_bytes = 0;   // the facts' (0 = not set: the network's export, else NCCL's)
  double pcie_bandwidth_gbps = 0;   // one GPU's PCIe link, one direction
  int nics_per_node = 0;            // the fewest NICs of any node with GPUs
  double nic_bandwidth_gbps = 0;    // one NIC port, one direction (capped by its network link)
  int network_switches = 0;
  int network_levels = 0;        // 0 = no network
  int network_switch_radix = 0;  // largest declared radix (or degree when undeclared)
  int vertices = 0;
  int links = 0;
};

// Hops, slowest link and summed latency of a route.
struct RouteMetrics {
  int hops = 0;
  double bottleneck_bandwidth_gbps = 0.0;  // 0 for an empty route
  double latency_us = 0.0;
};

struct TopologyData;  // the sealed graph plus its routing caches (src/topology_data.h)

// Immutable and cheap to copy (copies share the graph); safe to use from many threads.
class Topology {
 public:
  explicit Topology(std::shared_ptr<const TopologyData> data);

  const std::string& name() const;
  const std::string& description() const;
  const TopologyFacts& facts() const;

  std::span<const Vertex> vertices() const;
  std::span<const Link> links() const;
  const Vertex& vertex(VertexId id) const;  // throws InvalidArgument when out of range
  const Link& link(LinkId id) const;        // throws InvalidArgument when out of range
  std::optional<VertexId> find(std::string_view vertex_name) const;
  std::span<const LinkId> links_of(VertexId id) const;  // links touching a vertex, ascending
  VertexId other_end(LinkId link_id, VertexId from) const;

  int gpu_count() const;
  int node_count() const;        // nodes are numbered 0..node_count()-1
  VertexId gpu(int rank) const;  // throws InvalidArgument when rank is out of range
  std::vector<VertexId> node_vertices(int node) const;

  // Links from GPU rank_a to GPU rank_b in travel order (empty when a == b). Deterministic;
  // the rule is routing_rule() below. Throws InvalidArgument for a rank out of range.
  std::vector<LinkId> route(int rank_a, int rank_b) const;
  // Vertices visited by route(rank_a, rank_b), both GPUs included.
  std::vector<VertexId> route_vertices(int rank_a, int rank_b) const;
  // The NIC a GPU's inter-node traffic leaves through (nullopt when its node has none).
  std::optional<VertexId> home_nic(int rank) const;

  TopologySummary summary() const;

 private:
  std::shared_ptr<const TopologyData> data_;
};

RouteMetrics measure(const Topology& topology, std::span<const LinkId> route);

// The routing rule, in words (for docs, `topo show` and describe()).
std::string_view routing_rule();

std::string_view to_string(VertexKind kind);
std::string_view to_string(LinkType type);
std::string_view to_string(Duplex duplex);
std::string_view to_string(Sharing sharing);
std::string_view to_string(GpuArch arch);
std::string_view to_string(NetworkClass network);
std::string_view to_string(HostCpu cpu);
// Parsers accept exactly the to_string spellings; nullopt otherwise.
std::optional<VertexKind> parse_vertex_kind(std::string_view text);
std::optional<LinkType> parse_link_type(std::string_view text);
std::optional<Duplex> parse_duplex(std::string_view text);
std::optional<Sharing> parse_sharing(std::string_view text);
std::optional<GpuArch> parse_gpu_arch(std::string_view text);
std::optional<NetworkClass> parse_network_class(std::string_view text);
std::optional<HostCpu> parse_host_cpu(std::string_view text);
// Every spelling the parser accepts, in the enumeration's order (`--set` lists them).
std::vector<std::string_view> network_class_names();
std::vector<std::string_view> host_cpu_names();

// NVLink bandwidth of one link, one direction, as NCCL counts it: ampere (SM80) 20,
// hopper (SM90) 20.6, blackwell (SM100) 40.1 GB/s; cdna3 48 GB/s per xGMI link as RCCL counts it
// (its graph/topo.h, gfx94x: 64 GB/s line rate less CRC and protocol overhead); cdna4 55.7 GB/s
// (MI355X: 76.8 raw; AMD's single-node all_reduce reference, 390 GB/s busbw over its 7 links,
// ROCm/cvs single_node_mi355_rccl.json; RCCL's search counts 48 for gfx95x too); 0 for unknown.
double nvlink_link_bandwidth_gbps(GpuArch arch);
// Device memory (HBM) bandwidth of the arch's most common data-centre part, GB/s (vendors' data
// sheets): ampere A100 80GB 2039, hopper H100 SXM 3350, blackwell B200 8000, cdna3 MI300X 5300,
// cdna4 MI355X 8000; 0 for unknown. A topology's `memory_gbps` fact overrides it (H200: 4800).
double device_memory_gbps(GpuArch arch);
// PCIe bandwidth per direction as NCCL's table: 0.1875 GB/s per lane at gen1, doubling per
// generation (gen4 x16 = 24, gen5 x16 = 48). Throws InvalidArgument for gen outside 1..6.
double pcie_bandwidth_gbps(int gen, int lanes);

}  // namespace twinccl::topo
