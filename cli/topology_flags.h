// --set, --degrade and --fail: the what-if flags every command that takes a topology shares
// (perf, replay, compare, topo show|check, whatif), applied by topo::apply_edits (topology_edit.h).
//
//   TopologyFlags flags;
//   add_topology_flags(cmd, flags);                                  // before parsing
//   LoadedTopology t = load_edited_topology("dgx-h100", flags);      // after
//   LoadedTopology v = load_edited_topology("h100-cluster-2 --fail nic3@node1", flags);
//   for (const std::string& n : t.notes) out << "# note: " << n << "\n";
//
// A --topology value may carry its own edits after the name (whatif and replay compare several):
// "NAME --set K=V --degrade PART=RATE --fail PART"; the command's own flags apply to every one.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <utility>
#include <vector>

#include "twinccl/topologies/nccl_xml_hints.h"
#include "twinccl/topologies/topology.h"
#include "twinccl/topologies/topology_edit.h"

namespace twinccl::cli {

struct TopologyFlags {
  std::vector<std::string> sets;  // as typed; a name set twice: the last value wins
  // --degrade and --fail as typed, in the order given (applied in that order).
  std::vector<std::pair<topo::FaultKind, std::string>> faults;
};

void add_topology_flags(CLI::App* cmd, TopologyFlags& flags);
// Parses every flag (InvalidArgument naming the flag and listing what can be set).
topo::TopologyEdits to_edits(const TopologyFlags& flags);

struct LoadedTopology {
  topo::Topology topology;
  std::vector<std::string> notes;  // what the edits did (routes moved, what a model does not see)
  std::string label;               // the --topology value as given (whatif's column name)
  std::vector<double> gpu_speed;   // per GPU rank, as topo::EditedTopology::gpu_speed
};

// A replay's per-rank compute slowdown (1 / speed) for the GPUs a --degrade slowed.
std::vector<double> compute_slowdown(const LoadedTopology& topology);

// `spec`: a preset, file or "NAME --set ... --fail ..."; hints: NCCL XML hints for an .xml name.
LoadedTopology load_edited_topology(const std::string& spec, const TopologyFlags& common,
                                    const topo::NcclXmlHints& hints = {});

// "perf ... --set nvlink_gbps=600": the command-line words of the edits, for titles.
std::string edits_text(const TopologyFlags& flags);

}  // namespace twinccl::cli
