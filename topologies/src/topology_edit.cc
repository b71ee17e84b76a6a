// apply_edits: parameters and faults on a loaded topology (topology_edit.h says the syntax).
//
// How it works. The topology is copied into an editable graph (vertices, links, a "gone" flag on
// each), every edit changes that copy, and TopologyBuilder rebuilds and re-validates it, so the
// result is an ordinary Topology: routing (router.cc) finds paths around removed parts by itself,
// the analytic model reads the changed per-GPU/per-NIC figures through summary(), and the flow
// model times the changed links. `nodes` runs first (rail_cluster() repeats a one-node topology;
// a multi-node one keeps nodes 0..N-1, or grows to more from its family's preset with the settings
// its name records: topology_regrow.h), then nics_per_node, rates, latencies, oversubscription,
// nvls (the NVLS fact, NCCL_NVLS_ENABLE),
// then faults. A failed NIC on an 8-NIC node:
//     before: n1.gpu3 -> n1.pcie1 -> n1.nic3 -> leaf.su0.r3      (rail 3)
//     after:  n1.gpu3 -> n1.pcie1 -> n1.nic2 -> leaf.su0.r2      (nearest NIC left; a note says so)
#include "twinccl/topologies/topology_edit.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <variant>

#include "capped_text.h"
#include "topology_edit_faults.h"
#include "topology_edit_graph.h"
#include "topology_edit_table.h"
#include "topology_regrow.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/limits.h"
#include "twinccl/topologies/nccl_xml_hints.h"
#include "twinccl/topologies/preset_family.h"

namespace twinccl::topo {
namespace {

using detail::apply_fault;
using detail::EditGraph;
using detail::fault_flag;
using detail::nics_with_network;
using detail::note_moved_nics;
using detail::ParameterKind;
using detail::ParameterSpec;
using detail::remove_cut_off_nics;

// The edit label in a name ("dgx-h100+nic_gbps=25,fail:nic3@node1") leaves the base name at least
// 256 - 180 - 4 bytes of limits::max_name_bytes; the faults in a validation message are a line.
constexpr std::size_t kLabelMaxBytes = 180, kFaultsMaxBytes = 300;

bool is_network_switch(const EditGraph& g, VertexId v) {
  return g.vertices[static_cast<std::size_t>(v)].kind == VertexKind::network_switch;
}

// `nodes=N` before anything else: it changes the vertex set the other edits name.
Topology with_nodes(const Topology& t, int nodes, std::vector<std::string>& notes) {
  const std::string flag = fmt::format("--set nodes={}", nodes);
  if (nodes == t.node_count()) return t;
  if (t.node_count() == 1) {
    try {
      Topology out = rail_cluster(t, nodes);
      notes.push_back(
          fmt::format("{}: {} repeated {} times on a rail-optimized two-level "
                      "fat-tree (NIC i of every node on rail i)",
                      flag, t.name(), nodes));
      return out;
    } catch (const Error& e) {
      throw InvalidArgument(flag + ": " + e.what());
    }
  }
  if (nodes > t.node_count()) {
    auto grown = detail::regrow(t, nodes);
    if (auto* r = std::get_if<detail::Regrown>(&grown)) {
      notes.push_back(fmt::format("{}: {} (this family at {} nodes){}", flag, r->preset, nodes,
                                  detail::grown_settings_note(*r, t.node_count(), nodes)));
      return std::move(r->topology);
    }
    throw InvalidArgument(fmt::format(
        "{}: {} has {} nodes on its own network and cannot grow: {}; nodes can lower that "
        "(1..{}) or repeat a one-node topology; for more, name a larger topology ({}) with the "
        "same --set edits, or calibrate on it",
        flag, t.name(), t.node_count(), std::get<std::string>(grown), t.node_count(),
        preset_with_nodes(t.name(), nodes, nodes * t.gpu_count() / t.node_count())
            .value_or(fmt::format("h100-cluster-{}", nodes))));
  }
  EditGraph g = detail::copy_graph(t);
  for (std::size_t v = 0; v < g.vertices.size(); ++v) {
    if (g.vertices[v].node >= nodes) g.remove_vertex(static_cast<VertexId>(v));
  }
  notes.push_back(fmt::format("{}: nodes 0..{} of {} kept", flag, nodes - 1, t.name()));
  return detail::rebuild(g, t.name(), flag);
}

void keep_nics(EditGraph& g, int nics, const std::string& flag) {
  std::map<int, int> per_node;
  for (const Vertex& v : g.vertices) {
    if (v.kind == VertexKind::nic) ++per_node[v.node];
  }
  int most = 0;
  for (const auto& [node, n] : per_node) most = std::max(most, n);
  if (most == 0) throw InvalidArgument(flag + ": " + g.name + " has no NIC");
  if (nics > most) {
    throw InvalidArgument(
        fmt::format("{}: {} has at most {} NICs per node; nics_per_node can "
                    "lower that (1..{})",
                    flag, g.name, most, most));
  }
  for (std::size_t v = 0; v < g.vertices.size(); ++v) {
    const Vertex& x = g.vertices[v];
    if (x.kind == VertexKind::nic && x.local_index >= nics) {
      g.remove_vertex(static_cast<VertexId>(v));
    }
  }
}

// Sets one parameter on every link (or NIC) it covers; throws when it covers nothing here.
void set_parameter(EditGraph& g, const ParameterSpec& spec, double value, const std::string& flag,
                   std::vector<std::string>& notes) {
  int changed = 0;
  for (std::size_t i = 0; i < g.links.size(); ++i) {
    if (g.link_gone[i]) continue;
    Link& l = g.links[i];
    const bool fabric = is_network_switch(g, l.a) && is_network_switch(g, l.b);
    const bool nic_link =
        !fabric &&
        (g.vertices[static_cast<std::size_t>(l.a)].kind == VertexKind::nic ||
         g.vertices[static_cast<std::size_t>(l.b)].kind == VertexKind::nic) &&
        (is_network_switch(g, l.a) || is_network_switch(g, l.b) || l.type == LinkType::network);
    switch (spec.kind) {
      case ParameterKind::link_gbps:
        if (l.type != spec.type || (spec.type == LinkType::network && !fabric)) continue;
        l.bandwidth_gbps = value;
        break;
      case ParameterKind::link_latency_us:
        if (l.type != spec.type) continue;
        l.latency_us = value;
        break;
      case ParameterKind::nic_gbps:
        if (!nic_link) continue;
        l.bandwidth_gbps = value;
        break;
      case ParameterKind::oversubscription:
        if (!fabric) continue;
        l.bandwidth_gbps /= value;
        break;
      default:
        continue;
    }
    ++changed;
  }
  if (spec.kind == ParameterKind::nic_gbps) {
    for (std::size_t v = 0; v < g.vertices.size(); ++v) {
      if (g.vertex_gone[v] || g.vertices[v].kind != VertexKind::nic) continue;
      g.vertices[v].port_bandwidth_gbps = value;
      ++changed;
    }
  }
  if (changed == 0) {
    const std::string what =
        spec.kind == ParameterKind::nic_gbps ? "NIC"
        : spec.kind == ParameterKind::oversubscription ||
                (spec.kind == ParameterKind::link_gbps && spec.type == LinkType::network)
            ? "link between two network switches (no fat-tree)"
            : std::string(to_string(spec.type)) + " link";
    throw InvalidArgument(flag + ": " + g.name + " has no " + what + " to set");
  }
  if (spec.kind == ParameterKind::link_latency_us) {
    notes.push_back(flag +
                    ": both models charge NCCL's own per-hop latencies, which hold a node's "
                    "NVLink/PCIe hops and one network hop through a leaf at the presets' link "
                    "latencies (NVLink 0.2, PCIe 0.25, network 1 us); --fidelity flow adds a "
                    "link's latency above those, and all of it on leaf-spine links; the analytic "
                    "model does not; it also steers routing (shortest by hops, then latency)");
  } else if (spec.kind == ParameterKind::oversubscription ||
             (spec.kind == ParameterKind::link_gbps && spec.type == LinkType::network)) {
    notes.push_back(flag +
                    ": only --fidelity flow sees it (the analytic model, NCCL's, reads per-GPU "
                    "NVLink/PCIe and per-NIC rates, not fabric links)");
  }
}

// NVLS on or off as NCCL_NVLS_ENABLE sets it; on only where NCCL could run it (multicast needs
// Hopper or newer GPUs on an NVSwitch: transport/nvls.cc, search.cc).
void set_nvls(EditGraph& g, const TopologySummary& s, bool on, const std::string& flag) {
  const bool modern = s.arch == GpuArch::hopper || s.arch == GpuArch::blackwell;
  if (on && !(modern && s.nvswitches_per_node > 0)) {
    throw InvalidArgument(fmt::format(
        "{}: {} cannot run NVLS (it needs Hopper or Blackwell GPUs on an NVSwitch; arch {}, {} "
        "NVSwitches per node)",
        flag, g.name, to_string(s.arch), s.nvswitches_per_node));
  }
  g.facts.nvls = on;
}

bool analytic_figures_equal(const TopologySummary& a, const TopologySummary& b) {
  return a.nvlink_bandwidth_gbps == b.nvlink_bandwidth_gbps &&
         a.nvlinks_per_gpu == b.nvlinks_per_gpu && a.pcie_bandwidth_gbps == b.pcie_bandwidth_gbps &&
         a.nics_per_node == b.nics_per_node && a.nic_bandwidth_gbps == b.nic_bandwidth_gbps;
}

// A name set twice: the last value wins, for every name alike (docs/whatif.md); faults keep
// their order.
TopologyEdits last_setting_wins(const TopologyEdits& edits) {
  TopologyEdits out;
  out.faults = edits.faults;
  for (const Setting& s : edits.settings) {
    std::erase_if(out.settings, [&](const Setting& earlier) { return earlier.name == s.name; });
    out.settings.push_back(s);
  }
  return out;
}

// A share trend set without the node count it starts from starts from the topology as given
// (before `nodes`), unless it has one: recorded as a setting, so the name says it and a file grown
// from its name (topology_regrow.h) reads it back.
TopologyEdits with_trend_start(TopologyEdits edits, const Topology& topology) {
  const auto has = [&](std::string_view name) {
    return std::any_of(edits.settings.begin(), edits.settings.end(),
                       [&](const Setting& s) { return s.name == name; });
  };
  if (has("nic_share_per_doubling") && !has("nic_share_nodes") &&
      topology.facts().nic_share_nodes == 0) {
    edits.settings.push_back({"nic_share_nodes", static_cast<double>(topology.node_count())});
  }
  return edits;
}

}  // namespace

EditedTopology apply_edits(const Topology& topology, const TopologyEdits& edits) {
  if (edits.empty()) return {topology, {}, {}};
  const TopologyEdits effective = with_trend_start(last_setting_wins(edits), topology);
  std::vector<std::string> notes;
  Topology current = topology;
  for (const Setting& s : effective.settings) {
    if (detail::parameter_spec(s.name).kind == ParameterKind::nodes) {
      current = with_nodes(current, static_cast<int>(s.value), notes);
    }
  }
  EditGraph g = detail::copy_graph(current);
  for (const Setting& s : effective.settings) {
    const ParameterSpec& spec = detail::parameter_spec(s.name);
    const std::string flag = fmt::format("--set {}={:g}", s.name, s.value);
    if (spec.kind == ParameterKind::nics_per_node) keep_nics(g, static_cast<int>(s.value), flag);
  }
  for (const ParameterKind phase : {ParameterKind::link_gbps, ParameterKind::link_latency_us,
                                    ParameterKind::nic_gbps, ParameterKind::oversubscription}) {
    for (const Setting& s : effective.settings) {
      const ParameterSpec& spec = detail::parameter_spec(s.name);
      if (spec.kind != phase) continue;
      set_parameter(g, spec, s.value, fmt::format("--set {}={:g}", s.name, s.value), notes);
    }
  }
  for (const Setting& s : effective.settings) {
    const ParameterKind kind = detail::parameter_spec(s.name).kind;
    if (kind == ParameterKind::nvls) {
      set_nvls(g, current.summary(), s.value != 0.0, fmt::format("--set nvls={:g}", s.value));
    }
    if (kind == ParameterKind::host_launch_us) g.facts.host_launch_us = s.value;
    if (kind == ParameterKind::group_launch_us) g.facts.group_launch_us = s.value;
    if (kind == ParameterKind::network_hop_extra_us) g.facts.network_hop_extra_us = s.value;
    if (kind == ParameterKind::nic_delivered_share) g.facts.nic_delivered_share = s.value;
    if (kind == ParameterKind::nic_share_per_doubling) g.facts.nic_share_per_doubling = s.value;
    if (kind == ParameterKind::nic_share_nodes) g.facts.nic_share_nodes = static_cast<int>(s.value);
    if (kind == ParameterKind::nic_ports) g.facts.nic_ports = static_cast<int>(s.value);
    if (kind == ParameterKind::p2p_net_chunk_bytes) g.facts.p2p_net_chunk_bytes = s.value;
    if (kind == ParameterKind::nccl_buffsize_bytes) g.facts.nccl_buffsize_bytes = s.value;
    if (kind == ParameterKind::host_cpu)
      g.facts.host_cpu = *parse_host_cpu(detail::shown_setting(s));
    if (kind == ParameterKind::network)
      g.facts.network = *parse_network_class(detail::shown_setting(s));
  }
  std::string faults;
  const std::vector<bool> had_network = nics_with_network(g);
  std::vector<double> gpu_speed;
  for (const Fault& f : edits.faults) {
    apply_fault(g, f, notes, gpu_speed);
    faults += (faults.empty() ? "" : " ") + fault_flag(f);
  }
  remove_cut_off_nics(g, had_network, notes);
  const std::string label = detail::capped(effective.label(), kLabelMaxBytes);
  faults = detail::capped(faults, kFaultsMaxBytes);
  // Edits of an edited topology (a saved `topo show --format json` file edited again) add a
  // label each: the name keeps its start (the base name) and its end (the newest label), cut in
  // the middle to the reader's cap instead of being refused.
  const std::string name = detail::capped_keeping_end(topology.name() + "+" + label,
                                                      limits::max_name_bytes, label.size() + 1);
  // The description says it was edited, and how ("8 x 400G NICs" is not true after nic_gbps=25).
  const std::string edited_note = "; edited: " + label;
  g.description = detail::capped_keeping_end(g.description + edited_note,
                                             limits::max_description_bytes, edited_note.size());
  Topology out =
      detail::rebuild(g, name, faults.empty() ? "the edited topology" : "after " + faults);
  note_moved_nics(current, out, notes);
  // An edit that starves NICs (a port past its PCIe link: nic_gbps, pcie_gbps, any later one) says
  // so; a topology that came that way is check_report's to warn about.
  if (std::string nics = starved_nics_warning(out);
      !nics.empty() && nics != starved_nics_warning(current))
    notes.push_back(std::move(nics));
  if (!edits.faults.empty() && analytic_figures_equal(current.summary(), out.summary())) {
    notes.push_back(
        "the analytic model (NCCL's) does not see these faults: per-GPU NVLink/PCIe and per-NIC "
        "figures are unchanged; --fidelity flow times the changed links");
  }
  if (!gpu_speed.empty()) gpu_speed.resize(static_cast<std::size_t>(out.gpu_count()), 1.0);
  return {out, notes, gpu_speed};
}

}  // namespace twinccl::topo
