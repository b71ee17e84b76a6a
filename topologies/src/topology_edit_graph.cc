// The editable copy of a topology behind apply_edits (topology_edit_graph.h).
#include "topology_edit_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "topology_edit_table.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/builder.h"

namespace twinccl::topo::detail {

void EditGraph::remove_vertex(VertexId v) {
  vertex_gone[static_cast<std::size_t>(v)] = true;
  for (LinkId l : links_of[static_cast<std::size_t>(v)])
    link_gone[static_cast<std::size_t>(l)] = true;
}

std::vector<LinkId> EditGraph::live_links_of(VertexId v) const {
  std::vector<LinkId> out;
  for (LinkId l : links_of[static_cast<std::size_t>(v)]) {
    if (!link_gone[static_cast<std::size_t>(l)]) out.push_back(l);
  }
  return out;
}

EditGraph copy_graph(const Topology& t) {
  EditGraph g;
  g.name = t.name();
  g.description = t.description();
  g.facts = t.facts();
  g.vertices.assign(t.vertices().begin(), t.vertices().end());
  g.links.assign(t.links().begin(), t.links().end());
  g.vertex_gone.assign(g.vertices.size(), false);
  g.link_gone.assign(g.links.size(), false);
  g.links_of.resize(g.vertices.size());
  for (std::size_t v = 0; v < g.vertices.size(); ++v) {
    const auto span = t.links_of(static_cast<VertexId>(v));
    g.links_of[v].assign(span.begin(), span.end());
  }
  return g;
}

Topology rebuild(const EditGraph& g, const std::string& name, const std::string& context) {
  std::vector<std::pair<int, VertexId>> gpus;  // (old rank, vertex) of the GPUs kept
  for (std::size_t v = 0; v < g.vertices.size(); ++v) {
    if (!g.vertex_gone[v] && g.vertices[v].kind == VertexKind::gpu) {
      gpus.emplace_back(g.vertices[v].rank, static_cast<VertexId>(v));
    }
  }
  std::sort(gpus.begin(), gpus.end());
  std::map<VertexId, int> new_rank;
  for (std::size_t i = 0; i < gpus.size(); ++i) new_rank[gpus[i].second] = static_cast<int>(i);

  TopologyBuilder b(name);
  // Every fact (memory_gbps, the network class, the latency figures, nvls) survives an edit.
  b.description(g.description).facts(g.facts);
  std::vector<VertexId> id(g.vertices.size(), -1);
  for (std::size_t v = 0; v < g.vertices.size(); ++v) {
    if (g.vertex_gone[v]) continue;
    const Vertex& x = g.vertices[v];
    const auto rank = new_rank.find(static_cast<VertexId>(v));
    id[v] = b.add_vertex({.kind = x.kind,
                          .name = x.name,
                          .node = x.node,
                          .rank = rank == new_rank.end() ? -1 : rank->second,
                          .local_index = x.local_index,
                          .forwards = x.forwards,
                          .physical_switches = x.physical_switches,
                          .level = x.level,
                          .radix = x.radix,
                          .port_bandwidth_gbps = x.port_bandwidth_gbps});
  }
  for (std::size_t i = 0; i < g.links.size(); ++i) {
    const Link& l = g.links[i];
    if (g.link_gone[i]) continue;
    b.connect(id[static_cast<std::size_t>(l.a)], id[static_cast<std::size_t>(l.b)], spec_of(l));
  }
  try {
    return b.seal();
  } catch (const ConfigError& e) {
    throw InvalidArgument(context + ": " + e.what());
  }
}

namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// "gpu: n0.gpu0 .. n1.gpu7 (16); nic: ..." for the error of a part that does not exist.
std::string examples(const EditGraph& g) {
  std::map<VertexKind, std::vector<const Vertex*>> by_kind;
  for (std::size_t v = 0; v < g.vertices.size(); ++v) {
    if (!g.vertex_gone[v]) by_kind[g.vertices[v].kind].push_back(&g.vertices[v]);
  }
  std::string out;
  for (const auto& [kind, list] : by_kind) {
    out += fmt::format("\n  {}: {}{} ({})", to_string(kind), list.front()->name,
                       list.size() > 1 ? " .. " + list.back()->name : "", list.size());
  }
  return out;
}

}  // namespace

std::optional<VertexId> find_vertex(const EditGraph& g, std::string_view text, bool gone) {
  const std::size_t at = text.rfind("@node");
  std::optional<int> node;
  std::string_view local = text;
  if (at != std::string_view::npos) {
    int n = -1;
    const std::string_view digits = text.substr(at + 5);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc{} || end != digits.data() + digits.size() || digits.empty()) {
      return std::nullopt;
    }
    node = n;
    local = text.substr(0, at);
  }
  for (std::size_t v = 0; v < g.vertices.size(); ++v) {
    if (g.vertex_gone[v] != gone) continue;
    const Vertex& x = g.vertices[v];
    if (!node && x.name == text) return static_cast<VertexId>(v);
    if (node && x.node == *node &&
        (x.name == local || ends_with(x.name, "." + std::string(local)))) {
      return static_cast<VertexId>(v);
    }
  }
  return std::nullopt;
}

Part resolve_part(const EditGraph& g, std::string_view text, const std::string& flag) {
  const auto vertex = [&](std::string_view name) {
    const auto v = find_vertex(g, name, false);
    if (!v && find_vertex(g, name, true)) {
      throw InvalidArgument(flag + ": '" + shown_value(name) + "' is gone from " + g.name +
                            ": an earlier --fail (faults apply in the order given) or --set "
                            "nics_per_node removed it");
    }
    if (!v) {
      throw InvalidArgument(flag + ": no part '" + shown_value(name) + "' in " + g.name +
                            "; a part is a vertex name as `twinccl topo show` lists it, "
                            "NAME@nodeN (nic3@node1), or a link A<->B. Vertices:" +
                            examples(g));
    }
    return *v;
  };
  std::size_t arrow = text.find("<->");
  std::size_t arrow_len = 3;
  if (arrow == std::string_view::npos) {
    arrow = text.find("->");
    arrow_len = 2;
  }
  Part part;
  if (arrow == std::string_view::npos) {
    part.vertex = vertex(text);
    return part;
  }
  const VertexId a = vertex(text.substr(0, arrow));
  const VertexId b = vertex(text.substr(arrow + arrow_len));
  for (LinkId l : g.live_links_of(a)) {
    const Link& link = g.links[static_cast<std::size_t>(l)];
    if ((link.a == a && link.b == b) || (link.a == b && link.b == a)) part.links.push_back(l);
  }
  if (part.links.empty()) {
    throw InvalidArgument(flag + ": no link joins " + g.vertices[static_cast<std::size_t>(a)].name +
                          " and " + g.vertices[static_cast<std::size_t>(b)].name + " in " + g.name);
  }
  return part;
}

}  // namespace twinccl::topo::detail
