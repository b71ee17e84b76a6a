// How far off the analytic model is on published nccl-tests figures it was not fitted to, per
// class of machine (issue 24's scoreboard: tests/fidelity/figures/*.csv, docs/fidelity.md), so
// that a prediction on a preset can say so beside its numbers.
//
//   sim::machine_class_of("aws-p5-4", /*nodes*/ 4, /*ranks*/ 32);   // "aws-efa"
//   sim::held_out_note("aws-p5-4", topology, 32, /*edited*/ false);
//   // "held out: on published aws-efa figures the model was not fitted to, 45 of 80 at >= 64 MiB
//   //  were within 10% ..."
//
// One owner each: the record is the scoreboard tests/fidelity/test_figures.cc computes (that test
// fails, printing the record to put here, when they differ), and a preset's class is the one its
// rows in the CSVs carry (the same test checks every row's).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/topologies/topology.h"

namespace twinccl::sim {

struct HeldOutRecord {
  std::string machine_class;          // "aws-efa", as the CSVs name it
  int large_within = 0, large = 0;    // >= 64 MiB: within 10% of the measured time / judged
  int small_within = 0, small = 0;    // < 1 MiB: within 25% / judged
  int middle_within = 0, middle = 0;  // between: within 25% / judged
  int off_by_2x = 0;                  // judged figures off by more than 2x either way
  bool operator==(const HeldOutRecord& other) const = default;
};

// One per class, in the scoreboard's order (the "all" line is not one).
const std::vector<HeldOutRecord>& held_out_records();

// The class of machine a run of `ranks` ranks over `nodes` nodes of the preset named `preset`
// (without edits; an alias such as h100x16 too) belongs to: "nvswitch-1node", "ib-multinode",
// "aws-efa", "gcp-tcpxo", "roce-nvidia", "amd-1node", "amd-multinode", "nvl72", "one-gpu" (one
// rank); nullopt for a machine no published figure was judged on (a topology file, pcie-4gpu, a
// torus).
std::optional<std::string> machine_class_of(std::string_view preset, int nodes, int ranks);

// One sentence for a prediction's header with that class's record, naming how to fit the model to
// the user's own logs: the class of `ranks` ranks of `topology` (named `preset` as the user typed
// it, before edits); `edited`: the topology was changed (--set), so the record is the unedited
// preset's. "" when the machine has no class.
std::string held_out_note(std::string_view preset, const topo::Topology& topology, int ranks,
                          bool edited);

}  // namespace twinccl::sim
