// Internal: the trend of a calibration's bandwidth error with the node count
// (calibrate.h CalibrationScaleTrend), for calibrate.cc.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "calibrate_rows.h"

namespace twinccl::sim::detail {

// `multi_node`: the multi-node rows >= 64 MiB the fitted NIC rate bounds; `log_error_of(row)`:
// log(predicted / measured) of a row on the fitted topology. Absent when the rows span fewer than
// kScaleTrendMinNodeCounts node counts.
inline constexpr int kScaleTrendMinNodeCounts = 3;
std::optional<CalibrationScaleTrend> calibration_scale_trend(
    const std::vector<CalibrationRow>& multi_node, int topology_nodes,
    const std::function<double(const CalibrationRow&)>& log_error_of);

// What calibrate says where the NIC rate's rows (`nic_rows`) span fewer than
// kScaleTrendMinNodeCounts node counts and the topology has more nodes than their largest: the
// fitted rate is carried there as if the fabric delivered as much with more nodes sharing it,
// which these logs cannot check; the sweeps that would (`per_node`: GPUs a node, for the example
// command). "" where the logs show a trend or reach the topology's node count.
std::string unmeasured_scale_note(const std::vector<CalibrationRow>& nic_rows, int topology_nodes,
                                  int per_node);

// The topology's nic_delivered_share that carries `trend` to its node count (calibrate
// --scale-trend): `share_before` x (1 + the trend's error there), within the share's limits
// (topology/limits.h), and what to print under it. ConfigError naming the sweeps to measure when
// there is no trend (`per_node`: GPUs a node, for the example command).
struct TrendShare {
  double after = 1.0;
  std::string note;
};
TrendShare trend_share(const std::optional<CalibrationScaleTrend>& trend, double share_before,
                       int per_node);

}  // namespace twinccl::sim::detail
