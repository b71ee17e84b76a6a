// Internal to apply_edits: a multi-node topology grown past its own node count (`--set nodes=N`
// with N larger), so that a file `twinccl calibrate` fitted on a 2-node preset predicts 64 nodes:
//
//   "mi355x-roce-2+nvlink_gbps=58.4,nic_gbps=50"  --set nodes=4  ->  mi355x-roce-4 with
//   nvlink_gbps=58.4,nic_gbps=50 (named "mi355x-roce-4+nvlink_gbps=58.4,nic_gbps=50")
//
// How it works. The name records what built the topology: a preset, then one label per edit
// round ("NAME+LABEL+LABEL", topology_edit.cc). The labels are parsed back into settings, and the
// same family's preset at the topology's own node count, given those settings, must rebuild the
// topology part for part (every vertex, link, rate and latency, and the facts; numbers to 1e-9).
// Only then is the family's preset at N nodes given the same settings. A file edited by hand, a
// name cut to its cap, a label with a fault, or a topology of no preset family fails that check:
// the growth is refused with the reason, rather than silently dropping what the name does not say.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "twinccl/topologies/topology.h"

namespace twinccl::topo::detail {

struct Regrown {
  Topology topology;
  std::string preset;    // the family's preset at the new size: "mi355x-roce-4"
  std::string settings;  // the settings carried, as the name recorded them ("" = none)
};
// The grown topology, or why it cannot be grown (one clause: "its name names no preset family").
std::variant<Regrown, std::string> regrow(const Topology& topology, int nodes);
// What a grown topology carries, for the note `--set nodes` prints: its settings, and how its
// NICs' figures meet `nodes` from `from_nodes`: by the share trend it holds
// (nic_share_per_doubling), else unchanged ("" without settings).
std::string grown_settings_note(const Regrown& grown, int from_nodes, int nodes);

}  // namespace twinccl::topo::detail
