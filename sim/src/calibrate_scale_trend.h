// Internal: the trend of a calibration's bandwidth error with the node count
// (calibrate.h CalibrationScaleTrend), for calibrate.cc.
#pragma once

#include <functional>
#include <optional>
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

}  // namespace twinccl::sim::detail
