// draw_node(): one node as ASCII art, one 12-column cell per GPU, 8 GPUs per row block:
//
//   +==========================================================================================+
//   |                       nvswitch: 4 NVSwitch chips, NVLS                                   |
//   +==========================================================================================+
//        |370.8      |370.8      ...        <- the GPU's NVLink bandwidth into the fabric
//    +---------+ +---------+
//    |  gpu0   | |  gpu1   |
//    | rank 0  | | rank 1  |
//    +---------+ +---------+
//        |48         |48                  <- PCIe up to the switch below
//      pcie0       pcie0
//      nic0        nic1                   <- the GPU's home NIC, its port, its network switch
//
// then the CPUs with the PCIe switches under them, and direct GPU-GPU links when there are any.
#include <fmt/format.h>

#include <algorithm>

#include "twinccl/errors.h"
#include "twinccl/topologies/describe.h"

namespace twinccl::topo {
namespace {

constexpr std::size_t kCell = 12;
constexpr std::size_t kPerRow = 8;
constexpr std::size_t kMaxGpus = 64;

std::string cell(std::string text) {
  if (text.size() > kCell - 1) text = text.substr(0, kCell - 2) + "~";
  const std::size_t left = (kCell - text.size()) / 2;
  return std::string(left, ' ') + text + std::string(kCell - left - text.size(), ' ');
}

std::string row(const std::vector<std::string>& cells) {
  std::string out;
  for (const std::string& c : cells) out += cell(c);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "\n";
}

// The neighbour of `v` over its first link whose far end has `kind` (and the link).
std::optional<std::pair<VertexId, LinkId>> neighbour(const Topology& t, VertexId v,
                                                     VertexKind kind) {
  for (LinkId l : t.links_of(v)) {
    const VertexId n = t.other_end(l, v);
    if (t.vertex(n).kind == kind) return std::pair{n, l};
  }
  return std::nullopt;
}

std::string gbps(double v) { return fmt::format("{:g}", v); }

// "|  gpu0   |": text centred in a 9-wide box line.
std::string boxed(std::string text) {
  if (text.size() > 9) text = text.substr(0, 8) + "~";
  const std::size_t left = (9 - text.size()) / 2;
  return "|" + std::string(left, ' ') + text + std::string(9 - left - text.size(), ' ') + "|";
}

// Vertex name without its node prefix: "n12.gpu3" -> "gpu3".
std::string short_name(const Vertex& v) {
  const std::string prefix = "n" + std::to_string(v.node) + ".";
  return v.name.rfind(prefix, 0) == 0 ? v.name.substr(prefix.size()) : v.name;
}

}  // namespace

std::string draw_node(const Topology& t, int node) {
  const std::vector<VertexId> members = t.node_vertices(node);
  std::vector<VertexId> gpus, nvswitches, cpus;
  int pcie_switches = 0, nics = 0;
  for (VertexId v : members) {
    switch (t.vertex(v).kind) {
      case VertexKind::gpu:
        gpus.push_back(v);
        break;
      case VertexKind::nvswitch:
        nvswitches.push_back(v);
        break;
      case VertexKind::cpu:
        cpus.push_back(v);
        break;
      case VertexKind::pcie_switch:
        ++pcie_switches;
        break;
      case VertexKind::nic:
        ++nics;
        break;
      case VertexKind::network_switch:
        break;
    }
  }
  std::sort(gpus.begin(), gpus.end(), [&](VertexId a, VertexId b) {
    return t.vertex(a).local_index < t.vertex(b).local_index;
  });
  const TopologySummary s = t.summary();
  std::string out =
      fmt::format("node {} of {}: {} gpu, {} nvswitch, {} pcie_switch, {} cpu, {} nic\n", node,
                  t.name(), gpus.size(), nvswitches.size(), pcie_switches, cpus.size(), nics);
  const std::size_t shown = std::min(gpus.size(), kMaxGpus);
  const std::size_t width = kCell * std::min(shown, kPerRow);
  for (std::size_t first = 0; first < shown; first += kPerRow) {
    const std::vector<VertexId> block(
        gpus.begin() + static_cast<std::ptrdiff_t>(first),
        gpus.begin() + static_cast<std::ptrdiff_t>(std::min(shown, first + kPerRow)));
    std::vector<std::string> up, name, rank, pcie_bw, pcie, nic, port, net;
    for (VertexId g : block) {
      const Vertex& gv = t.vertex(g);
      const auto sw = neighbour(t, g, VertexKind::nvswitch);
      up.push_back(sw ? "|" + gbps(t.link(sw->second).bandwidth_gbps) : "");
      name.push_back(boxed(short_name(gv)));
      rank.push_back(boxed("rank " + std::to_string(gv.rank)));
      auto parent = neighbour(t, g, VertexKind::pcie_switch);
      if (!parent) parent = neighbour(t, g, VertexKind::cpu);
      pcie_bw.push_back(parent ? "|" + gbps(t.link(parent->second).bandwidth_gbps) : "");
      pcie.push_back(parent ? short_name(t.vertex(parent->first)) : "");
      const auto home = t.home_nic(gv.rank);
      nic.push_back(home ? short_name(t.vertex(*home)) : "");
      port.push_back(home ? gbps(t.vertex(*home).port_bandwidth_gbps) + " GB/s" : "");
      const auto leaf = home ? neighbour(t, *home, VertexKind::network_switch) : std::nullopt;
      net.push_back(leaf ? t.vertex(leaf->first).name : "");
    }
    if (first == 0 && !nvswitches.empty()) {
      const Vertex& nv = t.vertex(nvswitches.front());
      const std::string title =
          fmt::format("{}: {} NVSwitch chip{}{}", nv.name, nv.physical_switches,
                      nv.physical_switches == 1 ? "" : "s", s.nvls_capable ? ", NVLS" : "");
      const std::size_t inner = std::max(width, title.size() + 4) - 2;
      const std::size_t left = (inner - title.size()) / 2;
      out += "+" + std::string(inner, '=') + "+\n";
      out += "|" + std::string(left, ' ') + title + std::string(inner - left - title.size(), ' ') +
             "|\n";
      out += "+" + std::string(inner, '=') + "+\n";
    }
    if (!nvswitches.empty()) out += row(up);
    const std::vector<std::string> edge(block.size(), "+---------+");
    out += row(edge) + row(name) + row(rank) + row(edge);
    if (std::any_of(pcie.begin(), pcie.end(), [](const std::string& p) { return !p.empty(); })) {
      out += row(pcie_bw) + row(pcie);
    }
    if (std::any_of(nic.begin(), nic.end(), [](const std::string& n) { return !n.empty(); })) {
      out += row(nic) + row(port) + row(net);
    }
  }
  if (shown < gpus.size()) out += fmt::format("... and {} more GPUs\n", gpus.size() - shown);
  for (VertexId c : cpus) {
    std::string line = t.vertex(c).name + ":";
    for (LinkId l : t.links_of(c)) {
      const VertexId n = t.other_end(l, c);
      line += fmt::format(" {}({:g})", t.vertex(n).name, t.link(l).bandwidth_gbps);
      if (line.size() > 90) {
        out += line + "\n";
        line = "     ";
      }
    }
    out += line + "\n";
  }
  std::vector<std::string> direct;
  for (std::size_t i = 0; i < shown; ++i) {
    for (LinkId l : t.links_of(gpus[i])) {
      const VertexId n = t.other_end(l, gpus[i]);
      if (t.vertex(n).kind == VertexKind::gpu && n > gpus[i]) {
        direct.push_back(fmt::format("{}-{} {:g}", t.vertex(gpus[i]).name, t.vertex(n).name,
                                     t.link(l).bandwidth_gbps));
      }
    }
  }
  if (!direct.empty()) {
    std::string line = "GPU-GPU links (GB/s):";
    for (const std::string& d : direct) {
      if (line.size() + d.size() + 2 > 100) {
        out += line + "\n";
        line = " ";
      }
      line += "  " + d;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace twinccl::topo
