// Internal: the table of what --set accepts (topology_edit_parse.cc), read by apply_edits.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "twinccl/topologies/topology.h"
#include "twinccl/topologies/topology_edit.h"

namespace twinccl::topo::detail {

enum class ParameterKind {
  link_gbps,        // every link of `type` (network: only switch-to-switch links)
  link_latency_us,  // every link of `type`
  nic_gbps,         // NIC ports and NIC-to-network links
  nics_per_node,
  oversubscription,
  nodes,
  nvls,                    // 0/1: NVLS and NVLS-tree off/on (NCCL_NVLS_ENABLE)
  host_launch_us,          // the fact TopologyFacts::host_launch_us
  group_launch_us,         // the fact TopologyFacts::group_launch_us
  network_hop_extra_us,    // the fact TopologyFacts::network_hop_extra_us
  nic_delivered_share,     // the fact TopologyFacts::nic_delivered_share
  nic_share_per_doubling,  // the fact TopologyFacts::nic_share_per_doubling
  nic_share_nodes,         // the fact TopologyFacts::nic_share_nodes
  nic_ports,               // the fact TopologyFacts::nic_ports
  p2p_net_chunk_bytes,     // the fact TopologyFacts::p2p_net_chunk_bytes
  nccl_buffsize_bytes,     // the fact TopologyFacts::nccl_buffsize_bytes
  host_cpu,                // the fact TopologyFacts::host_cpu, one of `choices`
  network,                 // the fact TopologyFacts::network (its class), one of `choices`
};

struct ParameterSpec {
  std::string name;
  ParameterKind kind = ParameterKind::link_gbps;
  LinkType type = LinkType::network;
  double min = 0.0, max = 0.0;
  bool integer = false;
  std::string what;
  // Non-empty: the parameter names one of these (`--set host_cpu=x86-amd`) and a Setting's value
  // is its index here; min 0, max the last index.
  std::vector<std::string> choices;
};

const std::vector<ParameterSpec>& parameter_specs();
const ParameterSpec& parameter_spec(std::string_view name);  // InternalError when absent
// "\n  name: what" for every parameter.
std::string settable_list();
// At most limits::max_echo_bytes of a user's text, unprintable bytes as \xNN (core's
// shown_value).
std::string shown_value(std::string_view text);
// A setting's value as the user wrote it: a choice's name, else the number (%.15g). Throws
// InvalidArgument for a choice index outside the parameter's choices.
std::string shown_setting(const Setting& s);

}  // namespace twinccl::topo::detail
