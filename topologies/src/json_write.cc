// Writing a Topology as TwinCCL JSON: every vertex and link explicitly, one per line, fields at
// their default left out, so load(to_json(t)) rebuilds the same graph (same ids, ranks, links,
// facts). Numbers are nlohmann's shortest text that reads back as the same double (Grisu2), so
// every rate and latency survives bit for bit. A name or description longer than the reader takes
// (an imported NCCL XML's description names its path) is cut to the reader's cap with "...", and
// bytes that are not UTF-8 are written as \xNN, so the file always loads.
#include <nlohmann/json.hpp>

#include "capped_text.h"
#include "twinccl/errors.h"
#include "twinccl/output_file.h"
#include "twinccl/topologies/limits.h"
#include "twinccl/topologies/topology_file.h"
#include "twinccl/utf8_text.h"

namespace twinccl::topo {
namespace {

using json = nlohmann::ordered_json;

json vertex_json(const Vertex& v) {
  json j;
  j["name"] = v.name;
  j["kind"] = to_string(v.kind);
  if (v.node >= 0) j["node"] = v.node;
  if (v.kind == VertexKind::gpu) j["rank"] = v.rank;
  j["local_index"] = v.local_index;
  if (v.forwards != (v.kind != VertexKind::gpu)) j["forwards"] = v.forwards;
  if (v.physical_switches != 1) j["physical_switches"] = v.physical_switches;
  if (v.level != 0) j["level"] = v.level;
  if (v.radix != 0) j["radix"] = v.radix;
  if (v.port_bandwidth_gbps != 0) j["port_bandwidth_gbps"] = v.port_bandwidth_gbps;
  return j;
}

json link_json(const Topology& t, const Link& l) {
  json j;
  j["a"] = t.vertex(l.a).name;
  j["b"] = t.vertex(l.b).name;
  j["type"] = to_string(l.type);
  j["bandwidth_gbps"] = l.bandwidth_gbps;
  j["latency_us"] = l.latency_us;
  if (l.duplex != Duplex::full) j["duplex"] = to_string(l.duplex);
  if (l.sharing != Sharing::shared) j["sharing"] = to_string(l.sharing);
  if (l.lanes != 1) j["lanes"] = l.lanes;
  return j;
}

}  // namespace

std::string to_json(const Topology& t) {
  json head;
  head["version"] = 1;
  head["name"] = detail::capped(t.name(), limits::max_name_bytes);
  head["description"] = detail::capped(t.description(), limits::max_description_bytes);
  head["arch"] = to_string(t.facts().arch);
  head["pcie_gen"] = t.facts().pcie_gen;
  if (t.facts().memory_gbps > 0) head["memory_gbps"] = t.facts().memory_gbps;
  if (t.facts().network != NetworkClass::infiniband) head["network"] = to_string(t.facts().network);
  if (t.facts().host_cpu != HostCpu::x86) head["host_cpu"] = to_string(t.facts().host_cpu);
  if (t.facts().nvls) head["nvls"] = *t.facts().nvls;
  if (t.facts().host_launch_us > 0) head["host_launch_us"] = t.facts().host_launch_us;
  if (t.facts().group_launch_us > 0) head["group_launch_us"] = t.facts().group_launch_us;
  if (t.facts().network_hop_extra_us != 0) {
    head["network_hop_extra_us"] = t.facts().network_hop_extra_us;
  }
  if (t.facts().nic_delivered_share > 0) {
    head["nic_delivered_share"] = t.facts().nic_delivered_share;
  }
  if (t.facts().nic_share_per_doubling != 0) {
    head["nic_share_per_doubling"] = t.facts().nic_share_per_doubling;
    head["nic_share_nodes"] = t.facts().nic_share_nodes;
  }
  if (t.facts().nic_ports > 1) head["nic_ports"] = t.facts().nic_ports;
  if (t.facts().p2p_net_chunk_bytes > 0)
    head["p2p_net_chunk_bytes"] = t.facts().p2p_net_chunk_bytes;
  if (t.facts().nccl_buffsize_bytes > 0)
    head["nccl_buffsize_bytes"] = t.facts().nccl_buffsize_bytes;
  make_valid_utf8(head);
  std::string out = "{\n";
  for (const auto& [key, value] : head.items()) out += "  \"" + key + "\": " + value.dump() + ",\n";
  out += "  \"vertices\": [";
  const auto vertices = t.vertices();
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    out += (i == 0 ? "\n    " : ",\n    ") + json_dump(vertex_json(vertices[i]));
  }
  out += "\n  ],\n  \"links\": [";
  const auto links = t.links();
  for (std::size_t i = 0; i < links.size(); ++i) {
    out += (i == 0 ? "\n    " : ",\n    ") + json_dump(link_json(t, links[i]));
  }
  out += "\n  ]\n}\n";
  return out;
}

void save_topology_json(const Topology& topology, const std::filesystem::path& path) {
  // Checked, then written to a temporary file beside the path and renamed (output_file.h).
  check_output_path("topology file", path.string());
  const std::string text = to_json(topology);
  write_output_file("topology file", path.string(), [&](std::ostream& f) { f << text; });
}

}  // namespace twinccl::topo
