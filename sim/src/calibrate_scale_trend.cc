// The trend of a calibration's bandwidth error with the node count (calibrate_scale_trend.h).
//
// How it works. One NIC rate is fitted on every multi-node row >= 64 MiB together, so where a
// fabric delivers less the more nodes share it (Together's use3a-ss B200 cluster: ring busbw 345
// GB/s on 2 nodes, 335 on 4, 307 on 8, 291 on 46, where a sister cluster of the same hardware
// holds 388 - 390 at 1 - 64 nodes; docs/fidelity.md), the fit splits the difference and the rows
// leave a residual that falls with the node count. With the rows of three or more node counts,
// log(predicted / measured) after the fit is fitted by least squares as a + b log2(nodes), every
// row weighted alike: exp(b) - 1 is the change per doubling of nodes, exp(a + b log2(N)) - 1 the
// error the trend gives at the topology's N nodes. A straight line in log2(nodes) is the simplest
// form the rows can check, not a law of the fabric: its value beyond the logs' node counts is a
// warning of the size of the error, not a correction unless asked: `calibrate --scale-trend` sets
// the topology's nic_delivered_share so that its NIC-bound rows at the topology's node count take
// the trend's error out (time x 1 / (1 + error) where the NICs bound it; NCCL's ranking keeps the
// full rate), and prices the logs' own node counts with it too.
#include "calibrate_scale_trend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "twinccl/errors.h"
#include "twinccl/topologies/limits.h"

namespace twinccl::sim::detail {

namespace {
// The distinct node counts of `rows`' logs, ascending.
std::vector<int> node_counts(const std::vector<CalibrationRow>& rows) {
  std::vector<int> nodes;
  for (const CalibrationRow& r : rows) nodes.push_back(r.table->nodes);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}
}  // namespace

std::optional<CalibrationScaleTrend> calibration_scale_trend(
    const std::vector<CalibrationRow>& multi_node, int topology_nodes,
    const std::function<double(const CalibrationRow&)>& log_error_of) {
  const std::vector<int> nodes = node_counts(multi_node);
  if (static_cast<int>(nodes.size()) < kScaleTrendMinNodeCounts) return std::nullopt;
  double sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0;
  const double n = static_cast<double>(multi_node.size());
  for (const CalibrationRow& r : multi_node) {
    const double x = std::log2(static_cast<double>(r.table->nodes));
    const double y = log_error_of(r);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  // Three distinct node counts make the denominator positive.
  const double b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const double a = (sy - b * sx) / n;
  CalibrationScaleTrend t;
  t.nodes = nodes;
  t.rows = static_cast<int>(multi_node.size());
  t.per_doubling = std::exp(b) - 1.0;
  t.topology_nodes = topology_nodes;
  t.at_topology = std::exp(a + b * std::log2(static_cast<double>(topology_nodes))) - 1.0;
  return t;
}

std::string unmeasured_scale_note(const std::vector<CalibrationRow>& nic_rows, int topology_nodes,
                                  int per_node) {
  const std::vector<int> nodes = node_counts(nic_rows);
  if (nodes.empty() || static_cast<int>(nodes.size()) >= kScaleTrendMinNodeCounts ||
      topology_nodes <= nodes.back()) {
    return "";
  }
  // The next two node counts above the logs' largest that the topology reaches, for the example.
  const int next = std::min(2 * nodes.back(), topology_nodes);
  const int after = std::min(4 * nodes.back(), topology_nodes);
  return fmt::format(
      "the NIC rate is fitted on {} nodes ({} row{} of 64 MiB or more the NICs bound) and the "
      "file carries it to the topology's {} nodes as if the fabric delivered as much with more "
      "nodes sharing it; logs of fewer than {} node counts cannot check that (Together's use3a-ss "
      "B200 cluster, fitted on 1 + 2 nodes: 4 - 46 nodes up to 13% fast, its fabric delivering "
      "less the more nodes share it); measure the same sweep on {}{} nodes too (e.g. `mpirun -np "
      "{} -N {} all_reduce_perf -b 64M -e 8G -f 2 -g 1`) and calibrate on all of them: it then "
      "prints the trend, and --scale-trend carries it into the file",
      fmt::join(nodes, " and "), nic_rows.size(), nic_rows.size() == 1 ? "" : "s", topology_nodes,
      kScaleTrendMinNodeCounts, next, after > next ? fmt::format(" and {}", after) : "",
      next * per_node, per_node);
}

TrendShare trend_share(const std::optional<CalibrationScaleTrend>& trend, double share_before,
                       int per_node) {
  if (!trend) {
    throw ConfigError(fmt::format(
        "calibrate --scale-trend: the logs give no trend with the node count: it needs rows of "
        "64 MiB or more that the NICs bound on 3 or more node counts (these have fewer); measure "
        "the same sweep on 2, 4 and 8 nodes (e.g. `mpirun -np {} -N {} -x NCCL_ALGO=Ring "
        "all_reduce_perf -b 64M -e 8G -f 2 -g 1` and its 4- and 8-node runs)",
        2 * per_node, per_node));
  }
  const double wanted = share_before * (1.0 + trend->at_topology);
  TrendShare s;
  s.after = std::clamp(wanted, topo::limits::min_nic_delivered_share,
                       topo::limits::max_nic_delivered_share);
  s.note = fmt::format(
      "set from the trend with the node count ({:+.1f}% per doubling over {} - {} nodes) for the "
      "topology's {} nodes: {:.3g} x (1 {} {:.1f}%){}; the file prices every run on it with it, "
      "the "
      "logs' own too (their rows above), and carries the trend (`--set nodes=N` moves the share "
      "with it); an extrapolation, not a measurement",
      trend->per_doubling * 100.0, trend->nodes.front(), trend->nodes.back(), trend->topology_nodes,
      share_before, trend->at_topology < 0 ? "-" : "+", std::abs(trend->at_topology) * 100.0,
      s.after != wanted ? fmt::format(", held at the share's limit {:g} (a network moves no "
                                      "more than its line rate)",
                                      s.after)
                        : "");
  return s;
}

}  // namespace twinccl::sim::detail
