// Reading TwinCCL's JSON topology format (docs/topologies.md) into a TopologyBuilder.
//
// How it works: node templates are expanded first (node k's vertex "gpu0" becomes "n{k}.gpu0",
// with node = k), then top-level vertices, then template links, then top-level links, so a link
// may name any vertex. Every field is checked where it is read, and the error names the JSON
// path ("node_templates.dgx.links[2] (node=5): ..."); graph-level problems (connectivity, ranks)
// come from TopologyBuilder::seal() prefixed with the source name. Unknown fields are errors, so
// a typo like "bandwith_gbps" is caught instead of silently defaulted. The text is parsed by the
// bounded reader (twinccl/bounded_json.h), which refuses deep nesting and big objects with their
// line; while reading, every integer and number is range-checked (limits.h) and the vertex, link
// and node caps are checked before anything is added, so a file asking for 300M nodes is refused at
// once rather than filling memory.
#include <algorithm>
#include <map>

#include "input_checks.h"
#include "json_expand.h"
#include "json_fields.h"
#include "twinccl/bounded_json.h"
#include "twinccl/errors.h"
#include "twinccl/input_file.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/limits.h"
#include "twinccl/topologies/topology_file.h"

namespace twinccl::topo {
namespace {

using json_format::fail;
using json_format::Vars;
using namespace json_format;  // json, field readers (json_fields.h)

constexpr std::size_t kNameBytes = limits::max_name_bytes;

struct Reader {
  TopologyBuilder& builder;
  json link_defaults = json::object();

  void add_vertex(const json& entry, const std::string& where, const Vars& vars,
                  const std::string& prefix, std::optional<int> node) {
    only_fields(entry, where,
                {"name", "kind", "node", "rank", "local_index", "forwards", "physical_switches",
                 "level", "radix", "port_bandwidth_gbps", "repeat", "for_each"});
    const json none = json::object();
    json_format::for_each_repetition(entry, where, vars, [&](const Vars& v, const std::string& at) {
      if (builder.vertex_count() >= static_cast<std::size_t>(limits::max_vertices)) {
        fail(at, "more than " + std::to_string(limits::max_vertices) + " vertices (the cap)");
      }
      VertexSpec spec;
      spec.name = prefix + json_format::substitute(string_field(entry, at, "name", kNameBytes), v,
                                                   at + ".name");
      spec.kind = enum_field<VertexKind>(entry, none, at, "kind", std::nullopt, parse_vertex_kind,
                                         "gpu, nvswitch, pcie_switch, cpu, nic, network_switch");
      if (node && entry.contains("node")) fail(at + ".node", "not allowed inside a node template");
      const auto int_of = [&](const char* key, int default_value, long long lo, long long hi) {
        return static_cast<int>(int_field(entry, none, at, key, default_value, lo, hi));
      };
      spec.node = node ? *node : int_of("node", -1, -1, limits::max_nodes - 1);
      spec.rank = int_of("rank", -1, -1, limits::max_gpus - 1);
      spec.local_index = int_of("local_index", -1, -1, limits::max_vertices - 1);
      spec.forwards = bool_field(entry, at, "forwards");
      spec.physical_switches = int_of("physical_switches", 1, 1, limits::max_physical_switches);
      spec.level = int_of("level", 0, 0, limits::max_level);
      spec.radix = int_of("radix", 0, 0, limits::max_radix);
      spec.port_bandwidth_gbps = number_field(entry, none, at, "port_bandwidth_gbps", 0.0, 0.0,
                                              limits::max_bandwidth_gbps, " GB/s");
      if (spec.port_bandwidth_gbps != 0 && spec.port_bandwidth_gbps < limits::min_bandwidth_gbps) {
        fail(at + ".port_bandwidth_gbps",
             "must be 0 (unknown) or at least " + number_text(limits::min_bandwidth_gbps) +
                 " GB/s, got " + number_text(spec.port_bandwidth_gbps));
      }
      if (spec.name.size() > kNameBytes) {
        fail(at + ".name", "longer than " + std::to_string(kNameBytes) +
                               " bytes once expanded (the cap), got " + input::echo(spec.name));
      }
      if (std::any_of(spec.name.begin(), spec.name.end(),
                      [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
        fail(at + ".name", "name with a control character: " + input::echo(spec.name));
      }
      if (builder.find(spec.name)) {
        fail(at + ".name", "vertex " + input::echo(spec.name, '\'') + " already exists");
      }
      builder.add_vertex(std::move(spec));
    });
  }

  void add_link(const json& entry, const std::string& where, const Vars& vars,
                const std::string& prefix) {
    only_fields(entry, where,
                {"a", "b", "type", "bandwidth_gbps", "latency_us", "duplex", "sharing", "lanes",
                 "repeat", "for_each"});
    json_format::for_each_repetition(entry, where, vars, [&](const Vars& v, const std::string& at) {
      if (builder.link_count() >= static_cast<std::size_t>(limits::max_links)) {
        fail(at, "more than " + std::to_string(limits::max_links) + " links (the cap)");
      }
      const auto end = [&](const char* key) {
        // Inside a template, "/leaf0" names a vertex outside the node (no "n{k}." prefix).
        const std::string raw = string_field(entry, at, key, kNameBytes + 1);
        const bool global = !raw.empty() && raw.front() == '/';
        const std::string name =
            (global ? "" : prefix) +
            json_format::substitute(global ? raw.substr(1) : raw, v, join(at, key));
        const auto id = builder.find(name);
        if (!id) fail(join(at, key), "unknown vertex " + input::echo(name, '\''));
        return *id;
      };
      const VertexId a = end("a");
      const VertexId b = end("b");
      LinkSpec spec;
      spec.type =
          enum_field<LinkType>(entry, link_defaults, at, "type", std::nullopt, parse_link_type,
                               "nvlink, pcie, network, switch_internal, cpu_interconnect");
      spec.bandwidth_gbps =
          number_field(entry, link_defaults, at, "bandwidth_gbps", std::nullopt,
                       limits::min_bandwidth_gbps, limits::max_bandwidth_gbps, " GB/s");
      spec.latency_us = number_field(entry, link_defaults, at, "latency_us", 0.0, 0.0,
                                     limits::max_latency_us, " us");
      spec.duplex = enum_field<Duplex>(entry, link_defaults, at, "duplex", Duplex::full,
                                       parse_duplex, "full, half");
      spec.sharing = enum_field<Sharing>(entry, link_defaults, at, "sharing", Sharing::shared,
                                         parse_sharing, "shared, fatpipe");
      spec.lanes =
          static_cast<int>(int_field(entry, link_defaults, at, "lanes", 1, 1, limits::max_lanes));
      builder.connect(a, b, spec);
    });
  }
};

const json& array_field(const json& obj, const std::string& where, const char* key) {
  static const json empty = json::array();
  if (!obj.contains(key)) return empty;
  if (!obj[key].is_array()) fail(join(where, key), "must be an array, got " + describe(obj[key]));
  return obj[key];
}

Topology read_document(const json& doc);

struct PendingNode {
  std::string template_name;
  int node;
};

// Vertices and links the document will create, counted before any is made, against the caps.
void check_size(const json& templates, const std::vector<PendingNode>& pending, const json& doc) {
  std::map<std::string, std::pair<long long, long long>> per_template;  // vertices, links
  for (const auto& [name, tpl] : templates.items()) {
    auto& [vertices, links] = per_template[name];
    const std::string at = "node_templates." + name;
    for (const char* key : {"vertices", "links"}) {
      long long& sum = std::string_view(key) == "vertices" ? vertices : links;
      if (!tpl.contains(key) || !tpl[key].is_array()) continue;
      for (std::size_t i = 0; i < tpl[key].size(); ++i) {
        sum += json_format::repetition_count(tpl[key][i],
                                             at + "." + key + "[" + std::to_string(i) + "]");
      }
    }
  }
  long long vertices = 0, links = 0;
  for (const char* key : {"vertices", "links"}) {
    if (!doc.contains(key) || !doc[key].is_array()) continue;
    long long& sum = std::string_view(key) == "vertices" ? vertices : links;
    for (std::size_t i = 0; i < doc[key].size(); ++i) {
      sum += json_format::repetition_count(doc[key][i],
                                           std::string(key) + "[" + std::to_string(i) + "]");
    }
  }
  for (const PendingNode& p : pending) {  // each term <= 2^22 x 256 entries: no overflow
    vertices += per_template[p.template_name].first;
    links += per_template[p.template_name].second;
    if (vertices > limits::max_vertices || links > limits::max_links) break;
  }
  if (vertices > limits::max_vertices) {
    fail("nodes", "the nodes and vertices make more than " + std::to_string(limits::max_vertices) +
                      " vertices (the cap)");
  }
  if (links > limits::max_links) {
    fail("nodes", "the nodes and links make more than " + std::to_string(limits::max_links) +
                      " links (the cap)");
  }
}

}  // namespace

Topology topology_from_json(std::string_view text, std::string_view source) {
  const std::string src(source);
  const JsonCaps caps{.max_depth = limits::max_nesting_depth,
                      .max_object_members = limits::max_object_members};
  const json doc = parse_bounded_json<json>(
      text, caps, [&](const std::string& why) { throw ConfigError(src + ": " + why); });
  try {
    return read_document(doc);
  } catch (const ConfigError& e) {
    throw ConfigError(src + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {  // a check missed above: still name the file
    throw ConfigError(src + ": unexpected JSON content: " + json_detail::library_text(e.what()));
  }
}

namespace {

Topology read_document(const json& doc) {
  const std::string root;
  only_fields(doc, "(top level)",
              {"version",
               "name",
               "description",
               "arch",
               "pcie_gen",
               "memory_gbps",
               "network",
               "host_cpu",
               "nvls",
               "host_launch_us",
               "group_launch_us",
               "network_hop_extra_us",
               "nic_delivered_share",
               "nic_share_per_doubling",
               "nic_share_nodes",
               "nic_ports",
               "p2p_net_chunk_bytes",
               "nccl_buffsize_bytes",
               "defaults",
               "node_templates",
               "nodes",
               "vertices",
               "links"});
  if (!doc.contains("version")) fail("version", "missing (required; this reader knows version 1)");
  if (!doc["version"].is_number_integer() || doc["version"] != 1) {
    fail("version", "must be 1, got " + describe(doc["version"]));
  }
  const json none = json::object();
  TopologyBuilder builder(doc.contains("name") ? string_field(doc, root, "name", kNameBytes)
                                               : "unnamed");
  if (doc.contains("description")) {
    builder.description(string_field(doc, root, "description", limits::max_description_bytes));
  }
  builder.arch(enum_field<GpuArch>(doc, none, root, "arch", GpuArch::unknown, parse_gpu_arch,
                                   "unknown, ampere, hopper, blackwell, cdna3, cdna4"));
  builder.pcie_gen(static_cast<int>(int_field(doc, none, root, "pcie_gen", 0, 0, 6)));
  builder.memory_gbps(number_field(doc, none, root, "memory_gbps", 0.0, 0.0, 1e6, "GB/s"));
  builder.network(enum_field<NetworkClass>(
      doc, none, root, "network", NetworkClass::infiniband, parse_network_class,
      "infiniband, roce, efa, efa-v3, efa-sendrecv, tcpxo, tcpx, roce-gib"));
  builder.host_cpu(enum_field<HostCpu>(doc, none, root, "host_cpu", HostCpu::x86, parse_host_cpu,
                                       "x86, x86-amd, arm"));
  if (const auto nvls = bool_field(doc, root, "nvls")) builder.nvls(*nvls);
  builder.host_launch_us(
      number_field(doc, none, root, "host_launch_us", 0.0, 0.0, limits::max_host_launch_us, "us"));
  builder.group_launch_us(
      number_field(doc, none, root, "group_launch_us", 0.0, 0.0, limits::max_host_launch_us, "us"));
  builder.network_hop_extra_us(number_field(doc, none, root, "network_hop_extra_us", 0.0,
                                            -limits::max_network_hop_extra_us,
                                            limits::max_network_hop_extra_us, "us"));
  // 0 or 0.05 .. 1: validate() names the gap between.
  builder.nic_delivered_share(number_field(doc, none, root, "nic_delivered_share", 0.0, 0.0,
                                           limits::max_nic_delivered_share, ""));
  // A trend needs the node count it starts from: validate() says so.
  builder.nic_share_trend(
      number_field(doc, none, root, "nic_share_per_doubling", 0.0,
                   -limits::max_nic_share_per_doubling, limits::max_nic_share_per_doubling, ""),
      static_cast<int>(int_field(doc, none, root, "nic_share_nodes", 0, 0, limits::max_nodes)));
  builder.nic_ports(
      static_cast<int>(int_field(doc, none, root, "nic_ports", 0, 0, limits::max_nic_ports)));
  builder.p2p_net_chunk_bytes(number_field(doc, none, root, "p2p_net_chunk_bytes", 0.0, 0.0,
                                           limits::max_nccl_buffer_bytes, "bytes"));
  builder.nccl_buffsize_bytes(number_field(doc, none, root, "nccl_buffsize_bytes", 0.0, 0.0,
                                           limits::max_nccl_buffer_bytes, "bytes"));
  Reader reader{builder};
  if (doc.contains("defaults")) {
    only_fields(doc["defaults"], "defaults", {"link"});
    if (doc["defaults"].contains("link")) {
      reader.link_defaults = doc["defaults"]["link"];
      only_fields(reader.link_defaults, "defaults.link",
                  {"type", "bandwidth_gbps", "latency_us", "duplex", "sharing", "lanes"});
    }
  }
  const json templates = doc.contains("node_templates") ? doc["node_templates"] : json::object();
  if (!templates.is_object()) fail("node_templates", "must be an object of named templates");
  for (const auto& [name, tpl] : templates.items()) {
    if (name.size() > kNameBytes) {
      fail("node_templates", "template name longer than " + std::to_string(kNameBytes) +
                                 " bytes (the cap): " + input::echo(name));
    }
    only_fields(tpl, "node_templates." + name, {"vertices", "links"});
  }

  // Nodes from templates: vertices now, links once every vertex exists.
  std::vector<PendingNode> pending;
  const json& nodes = array_field(doc, root, "nodes");
  int next_node = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string at = "nodes[" + std::to_string(i) + "]";
    only_fields(nodes[i], at, {"template", "count"});
    const std::string tpl = string_field(nodes[i], at, "template", kNameBytes);
    if (!templates.contains(tpl))
      fail(at + ".template", "unknown node template " + input::echo(tpl, '\''));
    const long long count = int_field(nodes[i], none, at, "count", 1, 0, limits::max_nodes);
    if (next_node + count > limits::max_nodes) {
      fail(at + ".count", "brings the nodes to " + std::to_string(next_node + count) +
                              ", more than " + std::to_string(limits::max_nodes) + " (the cap)");
    }
    for (long long k = 0; k < count; ++k) pending.push_back({tpl, next_node++});
  }
  check_size(templates, pending, doc);
  for (const PendingNode& p : pending) {
    const std::string base = "node_templates." + p.template_name + ".vertices";
    const json& vertices =
        array_field(templates[p.template_name], "node_templates." + p.template_name, "vertices");
    const std::string prefix = "n" + std::to_string(p.node) + ".";
    for (std::size_t i = 0; i < vertices.size(); ++i) {
      reader.add_vertex(vertices[i], base + "[" + std::to_string(i) + "]", {{"node", p.node}},
                        prefix, p.node);
    }
  }
  const json& vertices = array_field(doc, root, "vertices");
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    reader.add_vertex(vertices[i], "vertices[" + std::to_string(i) + "]", {}, "", std::nullopt);
  }
  for (const PendingNode& p : pending) {
    const std::string base = "node_templates." + p.template_name + ".links";
    const json& links =
        array_field(templates[p.template_name], "node_templates." + p.template_name, "links");
    const std::string prefix = "n" + std::to_string(p.node) + ".";
    for (std::size_t i = 0; i < links.size(); ++i) {
      reader.add_link(links[i], base + "[" + std::to_string(i) + "]", {{"node", p.node}}, prefix);
    }
  }
  const json& links = array_field(doc, root, "links");
  for (std::size_t i = 0; i < links.size(); ++i) {
    reader.add_link(links[i], "links[" + std::to_string(i) + "]", {}, "");
  }
  return builder.seal();
}

}  // namespace

Topology load_topology_json(const std::filesystem::path& path) {
  return topology_from_json(
      read_input_file("topology file", path, limits::max_file_bytes,
                      "; describe big clusters with node templates and \"repeat\""),
      path.string());
}

}  // namespace twinccl::topo
