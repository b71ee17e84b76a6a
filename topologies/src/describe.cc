// describe(): a topology in a dozen lines of text (counts, bandwidths, network, routing rule).
#include "twinccl/topologies/describe.h"

#include <fmt/format.h>

#include <array>

#include "twinccl/topologies/network_nccl_env.h"

namespace twinccl::topo {
namespace {

// Word-wraps `text` to `width` columns, continuation lines indented by `indent` spaces.
std::string wrap(std::string_view text, std::size_t width, std::size_t indent) {
  std::string out, line;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(pos, end - pos);
    if (!line.empty() && line.size() + 1 + word.size() > width - indent) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + std::string(word);
    pos = end + 1;
  }
  return out + line;
}

}  // namespace

std::string describe(const Topology& t) {
  const TopologySummary s = t.summary();
  std::string out = wrap(fmt::format("{}: {}", s.name, t.description()), 100, 2) + "\n";
  out += fmt::format("  GPUs      {} ({} node{} x {}{}), arch {}\n", s.gpus, s.nodes,
                     s.nodes == 1 ? "" : "s", s.gpus_per_node, s.uniform_nodes ? "" : " at most",
                     to_string(s.arch));
  if (s.nvlinks_per_gpu > 0) {
    // AMD's GPU-GPU links (xGMI) use the nvlink link type; say what they are.
    const bool xgmi = is_amd(s.arch);
    out += fmt::format("  {}    {} links x {:g} GB/s = {:g} GB/s per GPU per direction{}\n",
                       xgmi ? "xGMI  " : "NVLink", s.nvlinks_per_gpu, s.nvlink_link_bandwidth_gbps,
                       s.nvlink_bandwidth_gbps, xgmi ? " (link type nvlink)" : "");
  } else {
    out += "  NVLink    none\n";
  }
  out += fmt::format("  NVSwitch  {} per node; NVLS in-switch reduction: {}\n",
                     s.nvswitches_per_node, s.nvls_capable ? "yes" : "no");
  out += s.pcie_bandwidth_gbps > 0
             ? fmt::format("  PCIe      gen{}, {:g} GB/s per GPU per direction\n", s.pcie_gen,
                           s.pcie_bandwidth_gbps)
             : std::string("  PCIe      none on the GPUs\n");
  out += s.nics_per_node > 0
             ? fmt::format("  NICs      {} per node x {:g} GB/s ({:g} Gb/s)\n", s.nics_per_node,
                           s.nic_bandwidth_gbps, s.nic_bandwidth_gbps * 8)
             : std::string("  NICs      none\n");
  if (s.nics_per_node > 0 && t.facts().nic_ports > 1) {
    out += fmt::format(
        "            on {} cards of {} ports each (NCCL runs each card as one device: IB / RoCE "
        "from 2.20.3, others from 2.24)\n",
        s.nics_per_node / t.facts().nic_ports, t.facts().nic_ports);
  }
  out += s.network_switches > 0
             ? fmt::format("  network   {} level{}, {} switches, radix {}; class {}\n",
                           s.network_levels, s.network_levels == 1 ? "" : "s", s.network_switches,
                           s.network_switch_radix, to_string(s.network))
             : std::string("  network   none\n");
  if (s.memory_gbps > 0) out += fmt::format("  memory    {:g} GB/s per GPU\n", s.memory_gbps);
  // The host's CPU: NCCL corrects some Blackwell timings on x86 hosts only (sim
  // nvls_tree_correction).
  out += fmt::format("  host CPU  {}\n", to_string(t.facts().host_cpu));
  if (s.host_launch_us > 0 || s.group_launch_us > 0 || s.network_hop_extra_us != 0) {
    const auto us = [](double v) { return v > 0 ? fmt::format("{:g} us", v) : "the model's"; };
    out += fmt::format(
        "  latency   host launch {} per call, {} per GPU of a -g N thread; network hop {:+g} us\n",
        us(s.host_launch_us), us(s.group_launch_us), s.network_hop_extra_us);
  }
  const TopologyFacts& facts = t.facts();
  const double trend = nic_share_trend_factor(facts, t.node_count());
  if (facts.nic_share_per_doubling != 0.0) {
    out += fmt::format(
        "  NIC share {} at {} nodes, {:+.1f}% per doubling of nodes: {} at these {} (of the NICs' "
        "rate moved by a collective across nodes)\n",
        s.nic_delivered_share > 0 ? fmt::format("{:g}", s.nic_delivered_share)
                                  : std::string("the network class's"),
        facts.nic_share_nodes, facts.nic_share_per_doubling * 100.0,
        s.nic_delivered_share > 0 ? fmt::format("{:.3g}", nic_share_at_nodes(facts, t.node_count(),
                                                                             s.nic_delivered_share))
                                  : fmt::format("x {:.3g}", trend),
        t.node_count());
  } else if (s.nic_delivered_share > 0) {
    out += fmt::format("  NIC share {:g} of the NICs' rate moved by a collective across nodes\n",
                       s.nic_delivered_share);
  }
  // The NCCL environment a call runs with and where each value comes from (network_nccl_env.h).
  const NetworkNcclEnv env = network_nccl_env(s.network);
  const NcclBuffer chunk = nccl_p2p_net_chunk(t.facts());
  const NcclBuffer buffer = nccl_buffsize(t.facts());
  if (chunk.source != NcclBuffer::Source::nccl || buffer.source != NcclBuffer::Source::nccl ||
      env.nvls_chunk_bytes > 0) {
    const auto shown = [&](const NcclBuffer& b, double exported) {
      if (b.source == NcclBuffer::Source::nccl) return fmt::format("NCCL's {:.0f}", b.bytes);
      const char* from = b.source == NcclBuffer::Source::network || b.bytes == exported
                             ? env.exporter
                             : "the topology's";
      return fmt::format("{:.0f} bytes ({})", b.bytes, from);
    };
    out +=
        fmt::format("  NCCL env  p2p net chunk {}, buffer {}",
                    shown(chunk, env.p2p_net_chunk_bytes), shown(buffer, env.nccl_buffsize_bytes));
    if (env.nvls_chunk_bytes > 0) {
      out += fmt::format("; NVLS chunk {:.0f} bytes ({})", env.nvls_chunk_bytes, env.exporter);
    }
    out += "\n";
  }
  std::array<int, 6> kinds{};
  std::array<int, 5> types{};
  for (const Vertex& v : t.vertices()) ++kinds[static_cast<std::size_t>(v.kind)];
  for (const Link& l : t.links()) ++types[static_cast<std::size_t>(l.type)];
  std::string graph = fmt::format("{} vertices (", s.vertices);
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    if (kinds[k] > 0)
      graph += fmt::format("{} {}, ", kinds[k], to_string(static_cast<VertexKind>(k)));
  }
  graph.resize(graph.size() - 2);
  graph += fmt::format("), {} links (", s.links);
  for (std::size_t k = 0; k < types.size(); ++k) {
    if (types[k] > 0)
      graph += fmt::format("{} {}, ", types[k], to_string(static_cast<LinkType>(k)));
  }
  if (s.links > 0) graph.resize(graph.size() - 2);
  out += "  graph     " + wrap(graph + ")", 100, 12) + "\n";
  out += "  routing   " + wrap(routing_rule(), 100, 12) + "\n";
  return out;
}

}  // namespace twinccl::topo
