// Calibration: the few physical parameters of a topology fitted to a user's own nccl-tests logs
// (`twinccl calibrate LOG... --topology T -o mycluster.json`).
//
//   std::vector<sim::NcclTestsTable> logs = sim::parse_nccl_tests_file_text(text, "1node.log");
//   ... append the 2-node log's tables ...
//   sim::Calibration c = sim::calibrate(topo::load_topology("aws-p5-2"), logs);
//   topo::save_topology_json(c.topology, "mycluster.json");  // perf/replay/whatif/compare take it
//
// What is fitted, and from what (nothing else moves):
//   nvlink_gbps           a GPU's NVLink (or xGMI) bandwidth, from every row >= 64 MiB (the
//                         one-node tables see it alone); where one-node rows of ring or tree
//                         see it, not from the one-node NVLS rows (NCCL's NVLS price: its error
//                         may be NVLS's at that GPU count; `fitted_on` says so)
//   nic_gbps              each NIC's rate, from the multi-node tables' rows >= 64 MiB
//   host_launch_us        one call's host time above its kernels (CUDA launch + NCCL enqueue),
//                         from the one-node rows below 1 MiB of tables with one GPU per thread
//   group_launch_us       per GPU when one thread launches N (nccl-tests `-g N`: a call takes at
//                         least N of them), from the one-node rows below 1 MiB of `-g N` tables
//   network_hop_extra_us  what a network hop costs beyond NCCL's (or the network class's) figure,
//                         from the multi-node tables' rows below 1 MiB
//   nic_delivered_share   after the passes, what NCCL's speed steps left on the rows nic_gbps
//                         bounds (it predicts alike between two steps): the share of the NICs'
//                         rate the calls moved, below the topology's only, listed only where it
//                         moved (0.5% or more); NCCL's ranking keeps the full rate
// Where the multi-node logs span three or more node counts, the bandwidth error left after the fit
// is fitted against log2(nodes) on the rows the NICs bound (`scale_trend`): its change per
// doubling, and what it gives at the topology's node count. Reported; with `scale_trend` also
// applied, as the topology's nic_delivered_share (the share of the NICs' rate a collective across
// nodes moves; NCCL's ranking keeps the full rate), listed with the parameters.
// Every row is priced with the algorithm and protocol its log ran: the log's NCCL_ALGO /
// NCCL_PROTO (NCCL's INFO line or an environment dump, or `--algo/--proto` per log: the table's
// nccl_algo / nccl_proto, nccl_env_choice.h), else NCCL's own choice; `priced_with` lists them.
// A forced ring on 2 nodes crosses the NICs in every step, so it shows their rate where NCCL's own
// tree or NVLS-tree would not.
// (one after the other, three passes; a one-node topology has no NIC or network hop to fit; a
// launch figure whose launch mode no log has keeps its value and is not listed).
// Each is one value chosen to minimise the squared log error of the predicted time over its rows
// (golden-section search: a scale in 1/8..8 of the rates and of the launch, an offset in -20..200
// us of the network hop). A fit the logs cannot determine is refused with a ConfigError naming the
// sweep to measure: no one-node or no multi-node table with rows of 64 MiB or more; for the
// latencies (unless `latencies` is off) no one-node or no multi-node table with rows below 1 MiB; a
// table whose ranks or nodes the log does not say. A NIC rate that no multi-node row >= 64 MiB
// sees (its time the same at 0.8 and 1.25 x the fit: NVLink or NCCL's NVLS-tree cap bounds them,
// as on 2 DGX H100) keeps the topology's value, with `not_determined` naming the sweep to measure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim {

struct CalibratedParameter {
  std::string name;  // a `--set` name: "nvlink_gbps", "nic_gbps", "host_launch_us", ...
  double before = 0.0, after = 0.0;
  int rows = 0;  // rows it was fitted on
  // Empty when fitted; else why the rows do not determine it (no row's time changes with it),
  // that `after` is the topology's value kept, and the sweep that would show it.
  std::string not_determined;
  // Empty when fitted on every row it names; else which of them it was fitted on, and why not
  // the others (nvlink_gbps: not on NVLS rows where ring rows see the link).
  std::string fitted_on;
};

struct CalibrationResidual {
  std::string log;     // the table's source file
  std::string regime;  // "latency" (< 1 MiB), "middle", "bandwidth" (>= 64 MiB)
  int rows = 0;
  double before = 0.0, after = 0.0;  // geometric-mean error: exp(mean log(predicted/measured)) - 1
};

// Which algorithm and protocol a log's rows were priced with: its NCCL_ALGO / NCCL_PROTO (from
// the log or --algo/--proto, nccl_env_choice.h), or NCCL's own choice.
struct CalibrationLog {
  std::string log;          // the table's source file
  std::string priced_with;  // "NCCL's choice", "ring", "ring/Simple", "nvls|nvls_tree (...)"
  std::string from;         // "NCCL_ALGO=Ring (line 12)", "NCCL_ALGO=Ring (--algo)"; "" = none
  // Where the log's NCCL version is not the one its rows were priced with (older than the
  // model's oldest, unreadable): why and which was (nccl_version_pricing); "" when it is.
  std::string nccl_version_note = {};
};

// How the bandwidth rows' error after the fit moves with the node count, where the multi-node
// logs span three or more node counts (calibrate_scale_trend.cc): what one NIC rate cannot say
// about a fabric that delivers less (or more) the more nodes share it, and what that trend gives
// at the topology's node count, beyond the logs. Reported; applied only with
// CalibrationOptions::scale_trend.
struct CalibrationScaleTrend {
  std::vector<int> nodes;     // the logs' node counts it is fitted on, ascending
  int rows = 0;               // multi-node rows >= 64 MiB it is fitted on
  double per_doubling = 0.0;  // predicted / measured, change per doubling of nodes (-0.03: 3%)
  int topology_nodes = 0;     // the fitted topology's node count
  double at_topology = 0.0;   // the trend's error there (exp(a + b log2 nodes) - 1)
};

struct Calibration {
  topo::Topology topology;  // the fitted one, named as apply_edits names an edited topology
  std::vector<CalibratedParameter> moved;
  std::vector<CalibrationResidual> residuals;
  std::vector<CalibrationLog> priced_with;           // one per table, in their order
  std::optional<CalibrationScaleTrend> scale_trend;  // absent: fewer than 3 node counts
  // Where the NIC rate was fitted on rows of fewer node counts than a trend needs and the
  // topology has more nodes than the largest: that the file carries the fitted rate there
  // unchecked, and which sweeps would check it ("" otherwise; calibrate_scale_trend.cc).
  std::string beyond_the_logs = {};
};

struct CalibrationOptions {
  bool latencies = true;  // also fit the launch figures and network_hop_extra_us (small rows)
  // Carry the bandwidth error's trend with the node count to the topology's node count as its
  // nic_delivered_share (logs of 3 or more node counts, else a ConfigError naming the sweeps).
  bool scale_trend = false;
};

Calibration calibrate(const topo::Topology& topology, const std::vector<NcclTestsTable>& tables,
                      const CalibrationOptions& options = {});

}  // namespace twinccl::sim
