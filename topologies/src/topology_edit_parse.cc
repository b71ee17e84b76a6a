// The parameters --set accepts (one table: name, range, what it sets) and the parsers of
// "NAME=VALUE" and "PART[=P%]". Applying them is topology_edit.cc.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>

#include "topology_edit_table.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/limits.h"
#include "twinccl/topologies/network_nccl_env.h"
#include "twinccl/topologies/topology_edit.h"

namespace twinccl::topo {
namespace detail {

namespace {

// "4096..2^30": the NCCL buffer range limits.h allows, as the help text shows it (2^N when the
// top is a power of two).
std::string nccl_buffer_range_text() {
  const double top_exponent = std::log2(limits::max_nccl_buffer_bytes);
  const std::string top = top_exponent == std::floor(top_exponent)
                              ? fmt::format("2^{:.0f}", top_exponent)
                              : fmt::format("{:.0f}", limits::max_nccl_buffer_bytes);
  return fmt::format("{:.0f}..{}", limits::min_nccl_buffer_bytes, top);
}

}  // namespace

// Ranges: bandwidths and latencies as a topology file may hold them (limits.h); counts as the
// presets and rail_cluster() allow.
const std::vector<ParameterSpec>& parameter_specs() {
  static const std::vector<ParameterSpec> specs = [] {
    std::vector<ParameterSpec> s;
    const auto add = [&](std::string name, ParameterKind kind, LinkType type, double min,
                         double max, bool integer, std::string what,
                         std::vector<std::string> choices = {}) {
      s.push_back(
          {std::move(name), kind, type, min, max, integer, std::move(what), std::move(choices)});
    };
    const auto rate = [&](std::string name, LinkType type, std::string what) {
      add(name, ParameterKind::link_gbps, type, limits::min_bandwidth_gbps,
          limits::max_bandwidth_gbps, false, std::move(what));
    };
    const auto latency = [&](std::string name, LinkType type, std::string what) {
      add(name, ParameterKind::link_latency_us, type, 0.0, limits::max_latency_us, false,
          std::move(what));
    };
    rate("nvlink_gbps", LinkType::nvlink,
         "every NVLink link, GB/s per direction (presets bundle a GPU's NVLinks in one link: "
         "dgx-h100 370.8)");
    latency("nvlink_latency_us", LinkType::nvlink, "every NVLink link, us per traversal");
    rate("pcie_gbps", LinkType::pcie, "every PCIe link, GB/s per direction (gen5 x16 = 48)");
    latency("pcie_latency_us", LinkType::pcie, "every PCIe link, us");
    add("nic_gbps", ParameterKind::nic_gbps, LinkType::network, limits::min_bandwidth_gbps,
        limits::max_bandwidth_gbps, false,
        "every NIC port and its links into the network, GB/s per direction (400G = 50)");
    rate("network_gbps", LinkType::network,
         "every link between two network switches (leaf-spine), GB/s per direction");
    latency("network_latency_us", LinkType::network,
            "every network link (NIC-leaf, leaf-spine), us");
    rate("cpu_interconnect_gbps", LinkType::cpu_interconnect,
         "every socket-to-socket link, GB/s per direction");
    latency("cpu_interconnect_latency_us", LinkType::cpu_interconnect, "every socket link, us");
    rate("switch_internal_gbps", LinkType::switch_internal,
         "every switch-internal link, GB/s per direction");
    latency("switch_internal_latency_us", LinkType::switch_internal,
            "every switch-internal link, us");
    add("nics_per_node", ParameterKind::nics_per_node, LinkType::network, 1, 1 << 20, true,
        "keep NICs 0..N-1 of every node (N from 1 to the NICs a node has)");
    add("oversubscription", ParameterKind::oversubscription, LinkType::network, 1, 1024, false,
        "fat-tree oversubscription R:1: links between network switches at 1/R of their "
        "rate (1..1024)");
    add("nodes", ParameterKind::nodes, LinkType::network, 1, 1024, true,
        "N nodes: a one-node topology repeated on a rail-optimized fat-tree, nodes 0..N-1 "
        "of a multi-node one, or more: its family's preset at N with the settings its name "
        "records (a calibrated file) (1..1024)");
    add("nvls", ParameterKind::nvls, LinkType::network, 0, 1, true,
        "0 = NVLS and NVLS-tree off, as NCCL_NVLS_ENABLE=0; 1 = on (Hopper or Blackwell "
        "GPUs on an NVSwitch)");
    add("host_launch_us", ParameterKind::host_launch_us, LinkType::network, 0,
        limits::max_host_launch_us, false,
        "one call's host time above its kernels (CUDA launch + NCCL enqueue), one GPU per "
        "process, us (0 = the model's 5)");
    add("group_launch_us", ParameterKind::group_launch_us, LinkType::network, 0,
        limits::max_host_launch_us, false,
        "per GPU when one thread launches N GPUs (nccl-tests -g N): a call takes at least "
        "N of them, us (0 = the model's 5)");
    add("network_hop_extra_us", ParameterKind::network_hop_extra_us, LinkType::network,
        -limits::max_network_hop_extra_us, limits::max_network_hop_extra_us, false,
        "us added to the latency of every network hop NCCL's model charges (may be "
        "negative; a hop never goes below 0)");
    add("nic_delivered_share", ParameterKind::nic_delivered_share, LinkType::network, 0,
        limits::max_nic_delivered_share, false,
        fmt::format("the share of the NICs' rate a call across nodes moves, of what "
                    "NCCL prices it at: 0 (the network class's: 1, TCPX 0.85) or "
                    "{:g} .. {:g}; NCCL still ranks algorithms at the full rate (what "
                    "`twinccl calibrate --scale-trend` sets)",
                    limits::min_nic_delivered_share, limits::max_nic_delivered_share));
    add("nic_share_per_doubling", ParameterKind::nic_share_per_doubling, LinkType::network,
        -limits::max_nic_share_per_doubling, limits::max_nic_share_per_doubling, false,
        fmt::format("the NICs' delivered share's change per doubling of nodes (-0.03: 3% less "
                    "each doubling), from nic_share_nodes (else the topology's node count as "
                    "given): --set nodes=N then moves the share with it; 0 = none, within "
                    "+-{:g} (what `twinccl calibrate --scale-trend` sets)",
                    limits::max_nic_share_per_doubling));
    add("nic_share_nodes", ParameterKind::nic_share_nodes, LinkType::network, 1, 1024, true,
        "the node count nic_delivered_share holds at, from which nic_share_per_doubling moves it "
        "(1..1024)");
    add("nic_ports", ParameterKind::nic_ports, LinkType::network, 1, limits::max_nic_ports, true,
        "the RDMA devices one NIC card presents (its ports, each a device): NCCL fuses a "
        "card's ports into one network device (NCCL_IB_MERGE_NICS from 2.20.3 on IB / RoCE, "
        "NCCL_NET_MERGE_LEVEL=PORT from 2.24 on other networks); 1 = one device a card");
    const NetworkNcclEnv efa = network_nccl_env(NetworkClass::efa);  // the help's example
    add("p2p_net_chunk_bytes", ParameterKind::p2p_net_chunk_bytes, LinkType::network, 0,
        limits::max_nccl_buffer_bytes, true,
        fmt::format("NCCL_P2P_NET_CHUNKSIZE of the run: bytes of one network message "
                    "of a send/recv (alltoall) across nodes, {} (0 = the network's export, "
                    "{}'s {:.0f} on EFA, else NCCL's {:.0f})",
                    nccl_buffer_range_text(), efa.exporter, efa.p2p_net_chunk_bytes,
                    kNcclDefaultP2pNetChunkBytes));
    add("nccl_buffsize_bytes", ParameterKind::nccl_buffsize_bytes, LinkType::network, 0,
        limits::max_nccl_buffer_bytes, true,
        fmt::format("NCCL_BUFFSIZE of the run, bytes: a Simple step is it / 8 (the "
                    "tree's Simple chunk, a ring's slices, the p2p chunk's cap), "
                    "{} (0 = the network's export, {}'s {:.0f} on EFA, else NCCL's "
                    "{:.0f})",
                    nccl_buffer_range_text(), efa.exporter, efa.nccl_buffsize_bytes,
                    kNcclDefaultBuffsizeBytes));
    // A fact named by one of `names` (a topology file's spellings); the value is its index.
    const auto named = [&](std::string name, ParameterKind kind,
                           const std::vector<std::string_view>& names, std::string what) {
      add(std::move(name), kind, LinkType::network, 0, static_cast<double>(names.size() - 1), true,
          std::move(what), std::vector<std::string>(names.begin(), names.end()));
    };
    named("host_cpu", ParameterKind::host_cpu, host_cpu_names(),
          "the hosts' CPUs: x86 (Intel, or not stated), x86-amd (AMD EPYC) or arm (Grace); "
          "NCCL prices a multi-node ring's network post (2 us on x86-amd, else 1) and LL's "
          "multi-node cap by it, Blackwell's NVLS-tree correction on x86 hosts only");
    named("network", ParameterKind::network, network_class_names(),
          "the scale-out network's class, as a topology file's `network`: a network hop's cost, "
          "the net plugin's per-message costs and the NCCL settings it exports, the protocols "
          "NCCL ranks across nodes; the links keep their rates (nic_gbps sets those)");
    return s;
  }();
  return specs;
}

const ParameterSpec& parameter_spec(std::string_view name) {
  for (const ParameterSpec& s : parameter_specs()) {
    if (s.name == name) return s;
  }
  throw InternalError("parameter '" + std::string(name) + "' is not in the table");
}

std::string settable_list() {
  std::string list;
  for (const ParameterSpec& s : parameter_specs()) list += "\n  " + s.name + ": " + s.what;
  return list;
}

std::string shown_value(std::string_view text) {
  return twinccl::shown_value(text, limits::max_echo_bytes);
}

std::string shown_setting(const Setting& s) {
  const ParameterSpec& spec = parameter_spec(s.name);
  if (spec.choices.empty()) return fmt::format("{:.15g}", s.value);
  const double i = s.value;
  if (!(i >= 0.0 && i < static_cast<double>(spec.choices.size())) || std::floor(i) != i) {
    throw InvalidArgument(fmt::format("--set {}: choice {:.15g} is not one of 0..{} ({})", s.name,
                                      s.value, spec.choices.size() - 1,
                                      fmt::join(spec.choices, ", ")));
  }
  return spec.choices[static_cast<std::size_t>(i)];
}

}  // namespace detail

namespace {

std::optional<double> parse_number(std::string_view text) {
  double value = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::vector<ParameterInfo> settable_parameters() {
  std::vector<ParameterInfo> out;
  for (const detail::ParameterSpec& s : detail::parameter_specs()) out.push_back({s.name, s.what});
  return out;
}

Setting parse_setting(std::string_view text) {
  const std::string shown = detail::shown_value(text);
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    throw InvalidArgument("--set '" + shown +
                          "': expected NAME=VALUE; settable:" + detail::settable_list());
  }
  const std::string_view name = text.substr(0, eq);
  const detail::ParameterSpec* spec = nullptr;
  for (const detail::ParameterSpec& s : detail::parameter_specs()) {
    if (s.name == name) spec = &s;
  }
  if (spec == nullptr) {
    throw InvalidArgument("--set '" + shown + "': unknown parameter '" + detail::shown_value(name) +
                          "'; settable:" + detail::settable_list());
  }
  if (!spec->choices.empty()) {
    const std::string_view named = text.substr(eq + 1);
    const auto it = std::find(spec->choices.begin(), spec->choices.end(), named);
    if (it == spec->choices.end()) {
      throw InvalidArgument(fmt::format("--set '{}': {} takes one of {} ({})", shown, spec->name,
                                        fmt::join(spec->choices, ", "), spec->what));
    }
    return {spec->name, static_cast<double>(it - spec->choices.begin())};
  }
  const auto value = parse_number(text.substr(eq + 1));
  // Exact: {:g} showed 2^30 + 1 as "1.07374e+09", the same as the bound it is over.
  const std::string range = fmt::format("{:.15g}..{:.15g}", spec->min, spec->max);
  if (!value || (spec->integer && std::floor(*value) != *value)) {
    throw InvalidArgument("--set '" + shown + "': " + spec->name + " takes " +
                          (spec->integer ? "a whole number" : "a number") + " in " + range + " (" +
                          spec->what + ")");
  }
  if (*value < spec->min || *value > spec->max) {
    throw InvalidArgument(fmt::format("--set '{}': {} must be in {}, got {:.15g} ({})", shown,
                                      spec->name, range, *value, spec->what));
  }
  return {spec->name, *value};
}

Fault parse_fault(FaultKind kind, std::string_view text) {
  const std::string flag = kind == FaultKind::fail ? "--fail" : "--degrade";
  const std::string shown = detail::shown_value(text);
  // A vertex name is at most limits::max_name_bytes; a link names two and "<->".
  if (text.size() > 2 * limits::max_name_bytes + 16) {
    throw InvalidArgument(
        fmt::format("{} '{}': {} bytes; a part names at most two vertices of {} "
                    "bytes each",
                    flag, shown, text.size(), limits::max_name_bytes));
  }
  Fault f;
  f.kind = kind;
  if (kind == FaultKind::fail) {
    if (text.empty() || text.find('=') != std::string_view::npos) {
      throw InvalidArgument(flag + " '" + shown +
                            "': expected a part: a vertex name (n1.nic3), NAME@nodeN (nic3@node1) "
                            "or a link A<->B; no '=' (a rate is --degrade's)");
    }
    f.part = std::string(text);
    return f;
  }
  const std::size_t eq = text.rfind('=');
  if (eq == std::string_view::npos || eq == 0) {
    throw InvalidArgument(flag + " '" + shown +
                          "': expected PART=RATE, the rate the part keeps: 25% or 0.25 "
                          "(e.g. --degrade nic3@node1=25%)");
  }
  f.part = std::string(text.substr(0, eq));
  std::string_view rate = text.substr(eq + 1);
  const bool percent = !rate.empty() && rate.back() == '%';
  if (percent) rate.remove_suffix(1);
  const auto value = parse_number(rate);
  const double fraction = value ? (percent ? *value / 100.0 : *value) : -1.0;
  if (!value || !(fraction > 0.0) || fraction > 1.0) {
    throw InvalidArgument(flag + " '" + shown +
                          "': the rate kept must be in (0%, 100%] (or (0, 1]); a part at 0 is "
                          "--fail PART");
  }
  f.speed_fraction = fraction;
  return f;
}

std::string TopologyEdits::label() const {
  std::string out;
  for (const Setting& s : settings) {
    out += fmt::format("{}{}={}", out.empty() ? "" : ",", s.name, detail::shown_setting(s));
  }
  for (const Fault& f : faults) {
    out += (out.empty() ? "" : ",") +
           std::string(f.kind == FaultKind::fail ? "fail:" : "degrade:") + f.part;
    if (f.kind == FaultKind::degrade) out += fmt::format("={:g}%", f.speed_fraction * 100.0);
  }
  return out;
}

}  // namespace twinccl::topo
