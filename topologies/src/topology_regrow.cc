// regrow: a multi-node topology grown to more nodes from its family's preset (topology_regrow.h
// says how it works and why it checks the rebuild first).
#include "topology_regrow.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>
#include <string_view>

#include "topology_edit_table.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/preset_family.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

namespace twinccl::topo::detail {
namespace {

bool close(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

// The first part in which `a` and `b` differ, in words; nullopt when they are the same.
std::optional<std::string> first_difference(const Topology& a, const Topology& b) {
  if (a.vertices().size() != b.vertices().size() || a.links().size() != b.links().size()) {
    return fmt::format("{} vertices and {} links against {} and {}", a.vertices().size(),
                       a.links().size(), b.vertices().size(), b.links().size());
  }
  for (std::size_t i = 0; i < a.vertices().size(); ++i) {
    const Vertex &x = a.vertices()[i], &y = b.vertices()[i];
    if (x.name != y.name || x.kind != y.kind || x.node != y.node || x.rank != y.rank ||
        x.local_index != y.local_index || x.forwards != y.forwards ||
        x.physical_switches != y.physical_switches || x.level != y.level || x.radix != y.radix ||
        !close(x.port_bandwidth_gbps, y.port_bandwidth_gbps)) {
      return "vertex " + x.name;
    }
  }
  for (std::size_t i = 0; i < a.links().size(); ++i) {
    const Link &x = a.links()[i], &y = b.links()[i];
    if (x.a != y.a || x.b != y.b || x.type != y.type || x.duplex != y.duplex ||
        x.sharing != y.sharing || x.lanes != y.lanes ||
        !close(x.bandwidth_gbps, y.bandwidth_gbps) || !close(x.latency_us, y.latency_us)) {
      return fmt::format("link {} <-> {}", a.vertex(x.a).name, a.vertex(x.b).name);
    }
  }
  const TopologyFacts &f = a.facts(), &g = b.facts();
  const bool same_facts =
      f.arch == g.arch && f.pcie_gen == g.pcie_gen && f.nvls == g.nvls && f.network == g.network &&
      f.host_cpu == g.host_cpu && close(f.memory_gbps, g.memory_gbps) &&
      close(f.host_launch_us, g.host_launch_us) && close(f.group_launch_us, g.group_launch_us) &&
      close(f.network_hop_extra_us, g.network_hop_extra_us) &&
      close(f.nic_delivered_share, g.nic_delivered_share) &&
      close(f.nic_share_per_doubling, g.nic_share_per_doubling) &&
      f.nic_share_nodes == g.nic_share_nodes && f.nic_ports == g.nic_ports &&
      close(f.p2p_net_chunk_bytes, g.p2p_net_chunk_bytes) &&
      close(f.nccl_buffsize_bytes, g.nccl_buffsize_bytes);
  if (!same_facts) return std::string("the machine's facts (host, network, NCCL settings)");
  return std::nullopt;
}

// Each '+'-separated label of the name after its base, parsed back into settings; nullopt with
// `why` set when a label holds a fault or does not parse (a name cut to its cap, a file's own).
std::optional<std::vector<TopologyEdits>> edit_rounds(std::string_view name, std::string& why) {
  std::vector<TopologyEdits> rounds;
  std::size_t plus = name.find('+');
  while (plus != std::string_view::npos) {
    const std::size_t next = name.find('+', plus + 1);
    const std::string_view label =
        name.substr(plus + 1, next == name.npos ? next : next - plus - 1);
    TopologyEdits round;
    std::size_t start = 0;
    while (start <= label.size()) {
      const std::size_t comma = std::min(label.find(',', start), label.size());
      const std::string_view item = label.substr(start, comma - start);
      if (item.starts_with("fail:") || item.starts_with("degrade:")) {
        why = fmt::format("its name records a fault ({}), which names parts of this size",
                          shown_value(item));
        return std::nullopt;
      }
      try {
        round.settings.push_back(parse_setting(item));
      } catch (const InvalidArgument&) {
        why =
            fmt::format("its name's edit '{}' does not read back as a setting", shown_value(item));
        return std::nullopt;
      }
      start = comma + 1;
    }
    rounds.push_back(round);
    plus = next;
  }
  return rounds;
}

Topology with_rounds(const std::string& preset, const std::vector<TopologyEdits>& rounds) {
  Topology t = load_topology(preset);
  for (const TopologyEdits& round : rounds) t = apply_edits(t, round).topology;
  return t;
}

}  // namespace

std::variant<Regrown, std::string> regrow(const Topology& topology, int nodes) {
  const int per_node = topology.gpu_count() / std::max(1, topology.node_count());
  const auto same_size =
      preset_with_nodes(topology.name(), topology.node_count(), topology.gpu_count());
  const auto grown = preset_with_nodes(topology.name(), nodes, nodes * per_node);
  if (!same_size || !grown) return std::string("its name names no preset family of that size");
  std::string why;
  auto rounds = edit_rounds(topology.name(), why);
  if (!rounds) return why;
  // `nodes` in a label chose this size from a larger preset: the family's own preset of this
  // size stands for it (the check below says whether it does).
  std::vector<std::string> carried;
  for (TopologyEdits& round : *rounds) {
    std::erase_if(round.settings, [](const Setting& s) { return s.name == "nodes"; });
    if (!round.empty()) carried.push_back(round.label());
  }
  try {
    if (const auto diff = first_difference(topology, with_rounds(*same_size, *rounds))) {
      return fmt::format(
          "{} with the settings its name records is not this topology ({} differs: "
          "a file edited by hand?)",
          *same_size, *diff);
    }
    return Regrown{with_rounds(*grown, *rounds), *grown,
                   fmt::format("{}", fmt::join(carried, "+"))};
  } catch (const Error& e) {
    return fmt::format("{} with the settings its name records: {}", *same_size, e.what());
  }
}

std::string grown_settings_note(const Regrown& r, int from_nodes, int nodes) {
  if (r.settings.empty()) return "";
  const TopologyFacts& f = r.topology.facts();
  std::string share;
  if (f.nic_share_per_doubling != 0.0) {
    share = fmt::format(
        "; its NICs' delivered share follows the trend it holds ({:+.1f}% per "
        "doubling from {} nodes: x {:.3g} at {})",
        f.nic_share_per_doubling * 100.0, f.nic_share_nodes, nic_share_trend_factor(f, nodes),
        nodes);
  } else if (r.settings.find("nic_gbps=") != std::string::npos ||
             r.settings.find("nic_delivered_share=") != std::string::npos) {
    share = fmt::format(
        "; its NIC figures are carried from {} to {} nodes as if the fabric delivered as much "
        "with more nodes sharing it (calibrate's logs of 3 or more node counts give the trend: "
        "`twinccl calibrate --scale-trend`)",
        from_nodes, nodes);
  }
  return fmt::format(" with this topology's settings {}{}", r.settings, share);
}

}  // namespace twinccl::topo::detail
