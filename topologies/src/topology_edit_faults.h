// Internal to apply_edits: the faults (--fail / --degrade) on the editable graph, and what they
// leave behind (NICs cut off from the network, GPUs whose home NIC moved).
#pragma once

#include <string>
#include <vector>

#include "topology_edit_graph.h"
#include "twinccl/topologies/topology_edit.h"

namespace twinccl::topo::detail {

// "--fail n1.nic3", "--degrade n0.gpu2=50%": the fault as the user wrote it, for messages.
std::string fault_flag(const Fault& f);
// Removes or slows the part a fault names, with a note; a GPU's --degrade also goes to
// `gpu_speed` (per rank, its compute in a replay). Throws InvalidArgument for a failed GPU.
void apply_fault(EditGraph& g, const Fault& f, std::vector<std::string>& notes,
                 std::vector<double>& gpu_speed);
// Which vertices are NICs with a network link (before the faults), for remove_cut_off_nics.
std::vector<bool> nics_with_network(const EditGraph& g);
// A NIC whose every network link failed (its leaf or its cable) is a failed NIC: removed.
void remove_cut_off_nics(EditGraph& g, const std::vector<bool>& had_network,
                         std::vector<std::string>& notes);
// "n1.gpu3 through n1.nic2 (was n1.nic3)" for every GPU whose home NIC moved.
void note_moved_nics(const Topology& before, const Topology& after,
                     std::vector<std::string>& notes);

}  // namespace twinccl::topo::detail
