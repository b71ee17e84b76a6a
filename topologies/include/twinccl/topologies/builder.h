// TopologyBuilder: add vertices and links, then seal() validates and returns the Topology.
//
//   topo::TopologyBuilder b("two-gpus");
//   auto g0 = b.add_gpu("gpu0", 0), g1 = b.add_gpu("gpu1", 0);
//   topo::Topology t = b.connect(g0, g1, {.type = topo::LinkType::nvlink, .bandwidth_gbps =
//   20}).seal();
//
// seal() throws twinccl::ConfigError naming the vertex, link or field and the bad value:
// no GPU, duplicate names, a link to a vertex that does not exist, bandwidth not > 0 or not
// finite, latency < 0 or not finite, lanes < 1, GPU ranks not 0..n-1, a GPU or NIC outside a node,
// a network switch inside one, NVLS claimed without NVSwitch, or GPUs that cannot reach each other;
// and anything past the caps in limits.h (sizes, value ranges). add_vertex() and connect() throw
// ConfigError once the vertex or link cap is passed, before memory grows further.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/topologies/topology.h"

namespace twinccl::topo {

struct VertexSpec {
  VertexKind kind = VertexKind::gpu;
  std::string name;
  int node = -1;                     // -1 only for network switches (shared by all nodes)
  int rank = -1;                     // gpu: -1 = the number of GPUs added before this one
  int local_index = -1;              // -1 = count of this kind already in the node
  std::optional<bool> forwards{};    // unset: every kind but gpu forwards
  int physical_switches = 1;         // nvswitch
  int level = 0;                     // network_switch
  int radix = 0;                     // network_switch
  double port_bandwidth_gbps = 0.0;  // nic
};

struct LinkSpec {
  LinkType type = LinkType::pcie;
  double bandwidth_gbps = 0.0;
  double latency_us = 0.0;
  Duplex duplex = Duplex::full;
  Sharing sharing = Sharing::shared;
  int lanes = 1;
};

// The spec of an existing link (to copy it into another builder).
inline LinkSpec spec_of(const Link& link) {
  return {.type = link.type,
          .bandwidth_gbps = link.bandwidth_gbps,
          .latency_us = link.latency_us,
          .duplex = link.duplex,
          .sharing = link.sharing,
          .lanes = link.lanes};
}

class TopologyBuilder {
 public:
  explicit TopologyBuilder(std::string name);

  TopologyBuilder& description(std::string text);
  TopologyBuilder& arch(GpuArch arch);
  TopologyBuilder& pcie_gen(int gen);
  TopologyBuilder& memory_gbps(double gbps);       // one GPU's HBM, GB/s (0 = the arch's)
  TopologyBuilder& network(NetworkClass network);  // between nodes (default infiniband)
  TopologyBuilder& host_cpu(HostCpu cpu);          // the hosts' CPUs (default x86)
  TopologyBuilder& nvls(bool capable);
  TopologyBuilder& host_launch_us(double us);          // 0 = the model's ~5 us
  TopologyBuilder& nic_ports(int ports);               // RDMA devices one NIC card presents
  TopologyBuilder& group_launch_us(double us);         // per GPU of a -g N thread; 0 = the model's
  TopologyBuilder& network_hop_extra_us(double us);    // added to each network hop
  TopologyBuilder& nic_delivered_share(double share);  // of the NICs' rate, across nodes
  // The share's trend: per doubling of nodes from `from_nodes` (TopologyFacts)
  TopologyBuilder& nic_share_trend(double per_doubling, int from_nodes);
  TopologyBuilder& p2p_net_chunk_bytes(double bytes);  // NCCL_P2P_NET_CHUNKSIZE; 0 = NCCL's
  TopologyBuilder& nccl_buffsize_bytes(double bytes);  // NCCL_BUFFSIZE; 0 = NCCL's
  TopologyBuilder& facts(const TopologyFacts& facts);  // all of them at once (an edited copy)

  VertexId add_vertex(VertexSpec spec);
  VertexId add_gpu(std::string name, int node, int rank = -1);
  VertexId add_switch(VertexKind kind, std::string name, int node = -1);
  VertexId add_cpu(std::string name, int node);
  VertexId add_nic(std::string name, int node, double port_bandwidth_gbps);

  // Links are undirected: a route may cross them either way.
  TopologyBuilder& connect(VertexId a, VertexId b, const LinkSpec& spec);
  // By vertex name; throws ConfigError when a name was never added.
  TopologyBuilder& connect(std::string_view a, std::string_view b, const LinkSpec& spec);

  std::optional<VertexId> find(std::string_view name) const;
  std::size_t vertex_count() const { return vertices_.size(); }
  std::size_t link_count() const { return links_.size(); }
  const std::string& name() const { return name_; }

  // Validates and returns the topology; the builder is left empty.
  Topology seal();

 private:
  std::string name_;
  std::string description_;
  TopologyFacts facts_;
  std::vector<Vertex> vertices_;
  std::vector<Link> links_;
  int gpus_added_ = 0;
  std::map<int, std::array<int, 6>> kind_counts_;  // [node][kind], for automatic local indexes
  std::map<std::string, VertexId, std::less<>> names_;
  std::string duplicate_name_;  // first name added twice, reported by seal()
};

}  // namespace twinccl::topo
