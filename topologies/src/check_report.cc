// check_report(): what `twinccl topo check FILE` prints for a topology that loaded (a file that
// does not load is reported by the ConfigError load_topology() throws).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>

#include "twinccl/topologies/describe.h"

namespace twinccl::topo {
namespace {

// Leaves whose NIC-facing bandwidth exceeds their uplink bandwidth.
void check_leaves(const Topology& t, std::vector<std::string>& warnings) {
  for (std::size_t v = 0; v < t.vertices().size(); ++v) {
    const auto id = static_cast<VertexId>(v);
    if (t.vertex(id).kind != VertexKind::network_switch) continue;
    double down = 0, up = 0;
    for (LinkId l : t.links_of(id)) {
      const VertexKind far = t.vertex(t.other_end(l, id)).kind;
      (far == VertexKind::nic ? down : up) += t.link(l).bandwidth_gbps;
    }
    if (down > 0 && up > 0 && down > up * 1.0001) {
      warnings.push_back(
          fmt::format("network switch '{}' is oversubscribed {:.2g}:1 ({:g} GB/s to "
                      "NICs, {:g} GB/s up)",
                      t.vertex(id).name, down / up, down, up));
    }
  }
}

// The routes' latency is their links'; a file's network_hop_extra_us (what calibrate fits) is
// added by the model to every network hop it charges, so it is said beside it.
std::string hop_extra_note(const Topology& t) {
  const double extra_us = t.facts().network_hop_extra_us;
  if (extra_us == 0.0) return "";
  return fmt::format(
      " on the links, {:+.4g} us on each network hop the model charges "
      "(network_hop_extra_us)",
      extra_us);
}

}  // namespace

// A quarter of slack: NCCL's own figures put DGX H100's 50 GB/s port behind a 48 GB/s gen5 x16
// link, which is not a what-if's mistake.
std::string starved_nics_warning(const Topology& t) {
  constexpr double kSlack = 1.25;
  int starved = 0;
  double port_gbps = 0, feed_gbps = 0;
  for (std::size_t v = 0; v < t.vertices().size(); ++v) {
    const auto id = static_cast<VertexId>(v);
    if (t.vertex(id).kind != VertexKind::nic) continue;
    double port = 0, feed = 0;
    for (LinkId l : t.links_of(id)) {
      const Link& link = t.link(l);
      if (link.type == LinkType::network) port = std::max(port, link.bandwidth_gbps);
      if (link.type == LinkType::pcie) feed = std::max(feed, link.bandwidth_gbps);
    }
    if (port > 0 && feed > 0 && port > kSlack * feed) {
      ++starved;
      port_gbps = port;
      feed_gbps = feed;
    }
  }
  if (starved == 0) return "";
  return fmt::format(
      "{} NICs run at most at their PCIe link: {:g} GB/s ports behind {:g} GB/s PCIe links (a "
      "faster NIC needs a faster path: --set pcie_gbps=N; gen5 x16 = 48, gen6 x16 = 96)",
      starved, port_gbps, feed_gbps);
}

std::string check_report(const Topology& t) {
  const TopologySummary s = t.summary();
  std::vector<std::string> warnings;
  if (!s.uniform_nodes) {
    warnings.push_back(
        fmt::format("nodes differ in size (up to {} GPUs per node)", s.gpus_per_node));
  }
  if (s.nodes > 1) {
    int without_nic = 0;
    for (int r = 0; r < s.gpus; ++r) without_nic += !t.home_nic(r).has_value();
    if (without_nic > 0) {
      warnings.push_back(
          fmt::format("{} GPUs have no NIC in their node: their inter-node routes "
                      "use the whole-graph fallback",
                      without_nic));
    }
  }
  if (t.facts().nvls.value_or(false) && s.arch != GpuArch::hopper && s.arch != GpuArch::blackwell) {
    warnings.push_back(fmt::format(
        "NVLS is claimed but arch is {} (NVLink SHARP needs Hopper or newer)", to_string(s.arch)));
  }
  if (s.nvlinks_per_gpu > 0 && s.arch == GpuArch::unknown) {
    warnings.push_back(
        "arch is unknown: the timing model cannot pick NCCL's per-architecture constants");
  }
  const auto half = std::count_if(t.links().begin(), t.links().end(),
                                  [](const Link& l) { return l.duplex == Duplex::half; });
  if (half > 0)
    warnings.push_back(fmt::format("{} half-duplex links (both directions share bandwidth)", half));
  check_leaves(t, warnings);
  if (std::string nics = starved_nics_warning(t); !nics.empty())
    warnings.push_back(std::move(nics));

  // Routes every GPU uses in a ring and towards rank 0. One route may search a whole node (or
  // graph), so on big graphs only evenly spaced ranks are checked: the work stays near
  // kRouteCheckBudget vertex visits instead of growing with GPUs x vertices.
  constexpr int kRouteCheckBudget = 1 << 24;
  const int sampled = std::min(s.gpus, std::max(64, kRouteCheckBudget / std::max(1, s.vertices)));
  int max_hops = 0, routes = 0;
  double min_bw = 0, max_latency = 0;
  for (int i = 0; i < sampled; ++i) {
    const int r = static_cast<int>(static_cast<long long>(i) * s.gpus / sampled);
    for (int peer : {(r + 1) % s.gpus, 0}) {
      if (peer == r) continue;
      const RouteMetrics m = measure(t, t.route(r, peer));
      min_bw =
          routes == 0 ? m.bottleneck_bandwidth_gbps : std::min(min_bw, m.bottleneck_bandwidth_gbps);
      max_hops = std::max(max_hops, m.hops);
      max_latency = std::max(max_latency, m.latency_us);
      ++routes;
    }
  }
  std::string out = fmt::format("{}: OK ({} GPUs in {} node{}, {} vertices, {} links)\n", s.name,
                                s.gpus, s.nodes, s.nodes == 1 ? "" : "s", s.vertices, s.links);
  if (routes > 0) {
    const std::string from =
        sampled < s.gpus ? fmt::format(", from {} of {} ranks evenly spaced", sampled, s.gpus) : "";
    out += fmt::format(
        "  routes checked: {} (ring neighbours and to rank 0{})\n"
        "    at most {} hops, slowest link {:g} GB/s, latency up to {:g} us{}\n",
        routes, from, max_hops, min_bw, max_latency, hop_extra_note(t));
  }
  out += fmt::format("  warnings: {}\n", warnings.size());
  for (const std::string& w : warnings) out += "  - " + w + "\n";
  return out;
}

}  // namespace twinccl::topo
