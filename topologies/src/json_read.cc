// Reading TwinCCL's JSON topology format (docs/topologies.md) into a TopologyBuilder.
//
// How it works: node templates are expanded first (node k's vertex "gpu0" becomes "n{k}.gpu0",
// with node = k), then top-level vertices, then template links, then top-level links, so a link
// may name any vertex. Every field is checked where it is read, and the error names the JSON
// path ("node_templates.dgx.links[2] (node=5): ..."); graph-level problems (connectivity, ranks)
// come from TopologyBuilder::seal() prefixed with the source name. Unknown fields are errors, so
// a typo like "bandwith_gbps" is caught instead of silently defaulted.
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "json_expand.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/topology_file.h"

namespace twinccl::topo {
namespace {

using json = nlohmann::ordered_json;
using json_format::fail;
using json_format::Vars;

std::string join(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

std::string number_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void only_fields(const json& obj, const std::string& where, const std::set<std::string>& known) {
  if (!obj.is_object()) fail(where, "must be an object, got " + obj.dump());
  for (const auto& [key, value] : obj.items()) {
    if (known.count(key) > 0) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    fail(where, "unknown field '" + key + "' (known: " + list + ")");
  }
}

const json* field(const json& obj, const json& fallback, const char* key) {
  if (obj.contains(key)) return &obj[key];
  if (fallback.is_object() && fallback.contains(key)) return &fallback[key];
  return nullptr;
}

std::string string_field(const json& obj, const std::string& where, const char* key) {
  const std::string at = join(where, key);
  if (!obj.contains(key)) fail(at, "missing (required)");
  if (!obj[key].is_string()) fail(at, "must be a string, got " + obj[key].dump());
  return obj[key].get<std::string>();
}

int int_field(const json& obj, const json& fallback, const std::string& where, const char* key,
              int default_value) {
  const json* v = field(obj, fallback, key);
  if (v == nullptr) return default_value;
  if (!v->is_number_integer()) fail(join(where, key), "must be an integer, got " + v->dump());
  return v->get<int>();
}

double number_field(const json& obj, const json& fallback, const std::string& where,
                    const char* key, std::optional<double> default_value) {
  const json* v = field(obj, fallback, key);
  if (v == nullptr) {
    if (!default_value) fail(join(where, key), "missing (required)");
    return *default_value;
  }
  if (!v->is_number()) fail(join(where, key), "must be a number, got " + v->dump());
  return v->get<double>();
}

template <typename Enum>
Enum enum_field(const json& obj, const json& fallback, const std::string& where, const char* key,
                std::optional<Enum> default_value, std::optional<Enum> (*parse)(std::string_view),
                const char* spellings) {
  const json* v = field(obj, fallback, key);
  if (v == nullptr) {
    if (!default_value)
      fail(join(where, key), std::string("missing (required; one of ") + spellings + ")");
    return *default_value;
  }
  const std::optional<Enum> e = v->is_string() ? parse(v->get<std::string>()) : std::nullopt;
  if (!e) fail(join(where, key), "must be one of " + std::string(spellings) + ", got " + v->dump());
  return *e;
}

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
      VertexSpec spec;
      spec.name =
          prefix + json_format::substitute(string_field(entry, at, "name"), v, at + ".name");
      spec.kind = enum_field<VertexKind>(entry, none, at, "kind", std::nullopt, parse_vertex_kind,
                                         "gpu, nvswitch, pcie_switch, cpu, nic, network_switch");
      if (node && entry.contains("node")) fail(at + ".node", "not allowed inside a node template");
      spec.node = node ? *node : int_field(entry, none, at, "node", -1);
      spec.rank = int_field(entry, none, at, "rank", -1);
      spec.local_index = int_field(entry, none, at, "local_index", -1);
      if (entry.contains("forwards")) {
        if (!entry["forwards"].is_boolean()) fail(at + ".forwards", "must be true or false");
        spec.forwards = entry["forwards"].get<bool>();
      }
      spec.physical_switches = int_field(entry, none, at, "physical_switches", 1);
      spec.level = int_field(entry, none, at, "level", 0);
      spec.radix = int_field(entry, none, at, "radix", 0);
      spec.port_bandwidth_gbps = number_field(entry, none, at, "port_bandwidth_gbps", 0.0);
      if (spec.port_bandwidth_gbps < 0) {
        fail(at + ".port_bandwidth_gbps",
             "must be >= 0, got " + number_text(spec.port_bandwidth_gbps));
      }
      if (builder.find(spec.name)) fail(at + ".name", "vertex '" + spec.name + "' already exists");
      builder.add_vertex(std::move(spec));
    });
  }

  void add_link(const json& entry, const std::string& where, const Vars& vars,
                const std::string& prefix) {
    only_fields(entry, where,
                {"a", "b", "type", "bandwidth_gbps", "latency_us", "duplex", "sharing", "lanes",
                 "repeat", "for_each"});
    json_format::for_each_repetition(entry, where, vars, [&](const Vars& v, const std::string& at) {
      const auto end = [&](const char* key) {
        // Inside a template, "/leaf0" names a vertex outside the node (no "n{k}." prefix).
        const std::string raw = string_field(entry, at, key);
        const bool global = !raw.empty() && raw.front() == '/';
        const std::string name =
            (global ? "" : prefix) +
            json_format::substitute(global ? raw.substr(1) : raw, v, join(at, key));
        const auto id = builder.find(name);
        if (!id) fail(join(at, key), "unknown vertex '" + name + "'");
        return *id;
      };
      const VertexId a = end("a");
      const VertexId b = end("b");
      LinkSpec spec;
      spec.type =
          enum_field<LinkType>(entry, link_defaults, at, "type", std::nullopt, parse_link_type,
                               "nvlink, pcie, network, switch_internal, cpu_interconnect");
      spec.bandwidth_gbps = number_field(entry, link_defaults, at, "bandwidth_gbps", std::nullopt);
      if (!(spec.bandwidth_gbps > 0)) {
        fail(at + ".bandwidth_gbps", "must be > 0, got " + number_text(spec.bandwidth_gbps));
      }
      spec.latency_us = number_field(entry, link_defaults, at, "latency_us", 0.0);
      if (spec.latency_us < 0)
        fail(at + ".latency_us", "must be >= 0, got " + number_text(spec.latency_us));
      spec.duplex = enum_field<Duplex>(entry, link_defaults, at, "duplex", Duplex::full,
                                       parse_duplex, "full, half");
      spec.sharing = enum_field<Sharing>(entry, link_defaults, at, "sharing", Sharing::shared,
                                         parse_sharing, "shared, fatpipe");
      spec.lanes = int_field(entry, link_defaults, at, "lanes", 1);
      if (spec.lanes < 1) fail(at + ".lanes", "must be >= 1, got " + std::to_string(spec.lanes));
      builder.connect(a, b, spec);
    });
  }
};

const json& array_field(const json& obj, const std::string& where, const char* key) {
  static const json empty = json::array();
  if (!obj.contains(key)) return empty;
  if (!obj[key].is_array())
    fail(join(where, key), std::string("must be an array, got ") + obj[key].type_name());
  return obj[key];
}

Topology read_document(const json& doc);

}  // namespace

Topology topology_from_json(std::string_view text, std::string_view source) {
  const std::string src(source);
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message says "parse error at line L, column C: ..."; keep that part.
    std::string what = e.what();
    const std::size_t at = what.find("parse error");
    throw ConfigError(src +
                      ": invalid JSON: " + (at == std::string::npos ? what : what.substr(at)));
  }
  try {
    return read_document(doc);
  } catch (const ConfigError& e) {
    throw ConfigError(src + ": " + e.what());
  }
}

namespace {

Topology read_document(const json& doc) {
  const std::string root;
  only_fields(doc, "(top level)",
              {"version", "name", "description", "arch", "pcie_gen", "nvls", "defaults",
               "node_templates", "nodes", "vertices", "links"});
  if (!doc.contains("version")) fail("version", "missing (required; this reader knows version 1)");
  if (!doc["version"].is_number_integer() || doc["version"].get<int>() != 1) {
    fail("version", "must be 1, got " + doc["version"].dump());
  }
  const json none = json::object();
  TopologyBuilder builder(doc.contains("name") ? string_field(doc, root, "name") : "unnamed");
  if (doc.contains("description")) builder.description(string_field(doc, root, "description"));
  builder.arch(enum_field<GpuArch>(doc, none, root, "arch", GpuArch::unknown, parse_gpu_arch,
                                   "unknown, ampere, hopper, blackwell"));
  builder.pcie_gen(int_field(doc, none, root, "pcie_gen", 0));
  if (doc.contains("nvls")) {
    if (!doc["nvls"].is_boolean()) fail("nvls", "must be true or false, got " + doc["nvls"].dump());
    builder.nvls(doc["nvls"].get<bool>());
  }
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
    only_fields(tpl, "node_templates." + name, {"vertices", "links"});
  }

  // Nodes from templates: vertices now, links once every vertex exists.
  struct PendingNode {
    std::string template_name;
    int node;
  };
  std::vector<PendingNode> pending;
  const json& nodes = array_field(doc, root, "nodes");
  int next_node = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const std::string at = "nodes[" + std::to_string(i) + "]";
    only_fields(nodes[i], at, {"template", "count"});
    const std::string tpl = string_field(nodes[i], at, "template");
    if (!templates.contains(tpl)) fail(at + ".template", "unknown node template '" + tpl + "'");
    const int count = int_field(nodes[i], none, at, "count", 1);
    if (count < 0) fail(at + ".count", "must be >= 0, got " + std::to_string(count));
    for (int k = 0; k < count; ++k) pending.push_back({tpl, next_node++});
  }
  for (const PendingNode& p : pending) {
    const std::string base = "node_templates." + p.template_name + ".vertices";
    const json& vertices = array_field(templates[p.template_name],
                                       "node_templates." + p.template_name + ".", "vertices");
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
        array_field(templates[p.template_name], "node_templates." + p.template_name + ".", "links");
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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("cannot open topology file '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return topology_from_json(text.str(), path.string());
}

}  // namespace twinccl::topo
