// Internal to apply_edits: an editable copy of a topology, its rebuild into a sealed Topology, and
// the parts (--degrade / --fail) named in it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/topologies/topology.h"

namespace twinccl::topo::detail {

struct EditGraph {
  std::string name, description;
  TopologyFacts facts;
  std::vector<Vertex> vertices;
  std::vector<Link> links;
  std::vector<bool> vertex_gone, link_gone;
  std::vector<std::vector<LinkId>> links_of;  // per vertex, every link (gone ones too)

  void remove_vertex(VertexId v);                       // and every link touching it
  std::vector<LinkId> live_links_of(VertexId v) const;  // links of v not removed
};

EditGraph copy_graph(const Topology& topology);
// The graph without its removed parts, sealed as `name`; GPU ranks keep their order (renumbered
// 0..n-1 when GPUs were removed). A ConfigError from validation comes back as InvalidArgument
// starting with `context` ("after --fail n1.nic3: ...").
Topology rebuild(const EditGraph& graph, const std::string& name, const std::string& context);

struct Part {
  std::optional<VertexId> vertex;  // a vertex part
  std::vector<LinkId> links;       // a link part: every live link joining its two ends
};
// "n1.nic3", "nic3@node1", "A<->B", "A->B". Throws InvalidArgument naming `flag`, the part and
// examples of what exists.
Part resolve_part(const EditGraph& graph, std::string_view text, const std::string& flag);
// The vertex `text` names ("n1.nic3", "nic3@node1") among the live vertices, or with `gone` among
// the removed ones.
std::optional<VertexId> find_vertex(const EditGraph& graph, std::string_view text, bool gone);

}  // namespace twinccl::topo::detail
