// The faults of apply_edits (topology_edit_faults.h): a failed part is removed from the editable
// graph (routes then avoid it), a degraded one keeps its links at a fraction of their rate.
#include "topology_edit_faults.h"

#include <fmt/format.h>

#include "topology_edit_table.h"
#include "twinccl/errors.h"

namespace twinccl::topo::detail {

std::string fault_flag(const Fault& f) {
  const std::string part = shown_value(f.part);
  return f.kind == FaultKind::fail
             ? "--fail " + part
             : fmt::format("--degrade {}={:g}%", part, f.speed_fraction * 100.0);
}

void apply_fault(EditGraph& g, const Fault& f, std::vector<std::string>& notes,
                 std::vector<double>& gpu_speed) {
  const std::string flag = fault_flag(f);
  // A part failed twice is failed: the second --fail changes nothing (a degrade after a fail is
  // refused by resolve_part, naming the part).
  if (f.kind == FaultKind::fail && f.part.find("->") == std::string::npos &&
      !find_vertex(g, f.part, false)) {
    if (const auto gone = find_vertex(g, f.part, true)) {
      notes.push_back(fmt::format("{}: {} is already gone (an earlier --fail); nothing more to do",
                                  flag, g.vertices[static_cast<std::size_t>(*gone)].name));
      return;
    }
  }
  const Part part = resolve_part(g, f.part, flag);
  if (part.vertex) {
    const VertexId v = *part.vertex;
    Vertex& x = g.vertices[static_cast<std::size_t>(v)];
    if (f.kind == FaultKind::fail) {
      if (x.kind == VertexKind::gpu) {
        throw InvalidArgument(flag +
                              ": a GPU cannot fail here (the ranks would change); slow it "
                              "with --degrade " +
                              f.part + "=10% or run on fewer ranks");
      }
      notes.push_back(fmt::format("{}: {} and its {} links removed; routes avoid it", flag, x.name,
                                  g.live_links_of(v).size()));
      g.remove_vertex(v);
      if (x.kind == VertexKind::nvswitch && g.facts.nvls.value_or(false)) {
        bool switch_left = false;  // NVLS needs an NVSwitch (NCCL turns it off without one)
        for (std::size_t o = 0; o < g.vertices.size(); ++o) {
          switch_left =
              switch_left || (!g.vertex_gone[o] && g.vertices[o].kind == VertexKind::nvswitch);
        }
        if (!switch_left) {
          g.facts.nvls = false;
          notes.push_back(flag + ": no NVSwitch is left, so NVLS and NVLS-tree are off");
        }
      }
      return;
    }
    // A NIC: its port and network links (its PCIe side is not the NIC's line rate); anything
    // else: every link it has.
    std::vector<LinkId> links;
    for (LinkId l : g.live_links_of(v)) {
      if (x.kind != VertexKind::nic ||
          g.links[static_cast<std::size_t>(l)].type == LinkType::network) {
        links.push_back(l);
      }
    }
    for (LinkId l : links) g.links[static_cast<std::size_t>(l)].bandwidth_gbps *= f.speed_fraction;
    if (x.kind == VertexKind::nic) x.port_bandwidth_gbps *= f.speed_fraction;
    if (x.kind == VertexKind::gpu) {  // faults never remove GPUs: its rank is its final rank
      const auto rank = static_cast<std::size_t>(x.rank);
      if (gpu_speed.size() <= rank) gpu_speed.resize(rank + 1, 1.0);
      gpu_speed[rank] *= f.speed_fraction;
    }
    notes.push_back(fmt::format(
        "{}: {} ({}) and its {} link{} at {:g}% of the rate{}", flag, x.name, to_string(x.kind),
        links.size(), links.size() == 1 ? "" : "s", f.speed_fraction * 100.0,
        x.kind == VertexKind::gpu
            ? " (a slow GPU: it moves data slower, and computes slower in a replay)"
            : ""));
    return;
  }
  for (LinkId l : part.links) {
    if (f.kind == FaultKind::fail) {
      g.link_gone[static_cast<std::size_t>(l)] = true;
    } else {
      g.links[static_cast<std::size_t>(l)].bandwidth_gbps *= f.speed_fraction;
    }
  }
  notes.push_back(fmt::format(
      "{}: {} link{} {}", flag, part.links.size(), part.links.size() == 1 ? "" : "s",
      f.kind == FaultKind::fail ? "removed; routes avoid it"
                                : fmt::format("at {:g}% of its rate", f.speed_fraction * 100.0)));
}

// "n1.gpu3 leaves its node through n1.nic2 (was n1.nic3)" for every GPU whose home NIC moved.
void note_moved_nics(const Topology& before, const Topology& after,
                     std::vector<std::string>& notes) {
  if (before.gpu_count() != after.gpu_count()) return;
  std::vector<std::string> moved;
  for (int r = 0; r < after.gpu_count(); ++r) {
    const auto a = before.home_nic(r), b = after.home_nic(r);
    const std::string was = a ? before.vertex(*a).name : "none";
    const std::string now = b ? after.vertex(*b).name : "none";
    if (was != now) {
      moved.push_back(
          fmt::format("{} through {} (was {})", after.vertex(after.gpu(r)).name, now, was));
    }
  }
  if (moved.empty()) return;
  std::string line = "routes moved: GPUs now leaving their node through another NIC: ";
  for (std::size_t i = 0; i < moved.size() && i < 8; ++i) line += (i ? "; " : "") + moved[i];
  if (moved.size() > 8) line += fmt::format("; and {} more", moved.size() - 8);
  notes.push_back(line);
}

// A NIC whose every network link failed (its leaf or its cable) is a failed NIC: removed, so that
// routes and the NIC count see it.
void remove_cut_off_nics(EditGraph& g, const std::vector<bool>& had_network,
                         std::vector<std::string>& notes) {
  for (std::size_t v = 0; v < g.vertices.size(); ++v) {
    if (g.vertex_gone[v] || !had_network[v]) continue;
    bool reaches = false;
    for (LinkId l : g.live_links_of(static_cast<VertexId>(v))) {
      reaches = reaches || g.links[static_cast<std::size_t>(l)].type == LinkType::network;
    }
    if (reaches) continue;
    notes.push_back(g.vertices[v].name + " lost every network link: removed as a failed NIC");
    g.remove_vertex(static_cast<VertexId>(v));
  }
}

std::vector<bool> nics_with_network(const EditGraph& g) {
  std::vector<bool> out(g.vertices.size(), false);
  for (std::size_t v = 0; v < g.vertices.size(); ++v) {
    if (g.vertex_gone[v] || g.vertices[v].kind != VertexKind::nic) continue;
    for (LinkId l : g.live_links_of(static_cast<VertexId>(v))) {
      out[v] = out[v] || g.links[static_cast<std::size_t>(l)].type == LinkType::network;
    }
  }
  return out;
}

}  // namespace twinccl::topo::detail
