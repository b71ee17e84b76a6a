// Parameters and faults applied to a loaded Topology: the one transformation every command uses
// for what-if studies (`--set NAME=VALUE`, `--degrade PART=P%`, `--fail PART`).
//
//   topo::TopologyEdits e;
//   e.settings.push_back(topo::parse_setting("nic_gbps=25"));        // 200 Gb/s NICs
//   e.faults.push_back(topo::parse_fault(topo::FaultKind::fail, "nic3@node1"));
//   topo::EditedTopology r = topo::apply_edits(topo::load_topology("h100-cluster-2"), e);
//   // r.topology: routes avoid n1.nic3; r.notes: "fail n1.nic3: ... n1.gpu3 now leaves ..."
//
// Order: nodes, nics_per_node, then link rates and latencies, oversubscription, then faults in the
// order given. A name set twice: the last value wins (every name alike). A part failed twice stays
// failed (a note); a degrade of a part an earlier --fail removed is refused, naming the part. A
// part is a vertex name as `twinccl topo show` lists it ("n1.nic3", "spine0"), KIND_INDEX@nodeN
// ("nic3@node1" = the vertex of node 1 named nic3 or N.nic3), or a link "A<->B" / "A->B" (the names
// --links prints; the fault applies to both directions). Every bad input is an InvalidArgument
// naming the flag, the value and what is allowed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "twinccl/topologies/topology.h"

namespace twinccl::topo {

struct ParameterInfo {
  std::string name;  // "nvlink_gbps"
  std::string what;  // one line: what it sets, unit and range
};
// Every name --set accepts, in a fixed order.
std::vector<ParameterInfo> settable_parameters();

struct Setting {
  std::string name;
  double value = 0.0;
};
// "NAME=VALUE": throws InvalidArgument for an unknown name (listing every settable one), a value
// that is not a finite number, or one outside the parameter's range.
Setting parse_setting(std::string_view text);

enum class FaultKind { degrade, fail };
struct Fault {
  FaultKind kind = FaultKind::fail;
  std::string part;             // as written; resolved against the topology by apply_edits
  double speed_fraction = 0.0;  // degrade: the share of its rate the part keeps, in (0, 1]
};
// fail: "PART"; degrade: "PART=25%" or "PART=0.25" (the rate kept). Throws InvalidArgument.
Fault parse_fault(FaultKind kind, std::string_view text);

struct TopologyEdits {
  std::vector<Setting> settings;
  std::vector<Fault> faults;
  bool empty() const { return settings.empty() && faults.empty(); }
  // "nvlink_gbps=600,degrade:nic3@node1=25%": appended to the topology's name after a '+'.
  std::string label() const;
};

struct EditedTopology {
  Topology topology;
  // One line per edit the user should know about: routes that moved around a failed part, what
  // the analytic (NCCL) model does not see (fabric links, latencies).
  std::vector<std::string> notes;
  // Per GPU rank: the share of its speed a degraded GPU keeps (1 = nominal); empty when no GPU
  // was degraded. A replay slows that rank's compute by 1/speed (sim::ReplayOptions).
  std::vector<double> gpu_speed;
};

// The topology with every edit applied (and re-validated), named "NAME+LABEL" when edits exist.
// Throws InvalidArgument when a part does not exist, a parameter has nothing to set here (nic_gbps
// without NICs), or a failure leaves GPUs without a path (naming the failed parts).
EditedTopology apply_edits(const Topology& topology, const TopologyEdits& edits);

}  // namespace twinccl::topo
