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
// warning of the size of the error, not a correction (calibrate does not apply it).
#include "calibrate_scale_trend.h"

#include <algorithm>
#include <cmath>

namespace twinccl::sim::detail {

std::optional<CalibrationScaleTrend> calibration_scale_trend(
    const std::vector<CalibrationRow>& multi_node, int topology_nodes,
    const std::function<double(const CalibrationRow&)>& log_error_of) {
  std::vector<int> nodes;
  for (const CalibrationRow& r : multi_node) nodes.push_back(r.table->nodes);
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
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

}  // namespace twinccl::sim::detail
