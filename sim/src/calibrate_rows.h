// Internal: the rows a calibration fit reads (calibrate_inputs.cc), checked and sorted by what
// they can determine, for calibrate.cc's fits.
//
//   detail::CalibrationRows rows = detail::calibration_rows(topology, tables, options);
//   for (const detail::CalibrationRow& r : rows.one_node) ...  // one-node rows >= 64 MiB
#pragma once

#include <cstddef>
#include <vector>

#include "twinccl/sim/calibrate.h"
#include "twinccl/sim/nccl_env_choice.h"
#include "twinccl/sim/size_regime.h"

namespace twinccl::sim::detail {

// The fits read the regimes compare reports (size_regime.h): bandwidth rows from 64 MiB,
// latency rows below 1 MiB.
inline constexpr std::size_t kCalibrationBandwidthRowBytes = kBandwidthRegimeFromBytes;
inline constexpr std::size_t kCalibrationLatencyRowBytes = kLatencyRegimeBelowBytes;

struct CalibrationRow {
  const NcclTestsTable* table = nullptr;
  const NcclTestsRow* row = nullptr;
  double measured_us = 0.0;
  const LoggedChoice* choice = nullptr;  // the log's NCCL_ALGO / NCCL_PROTO
};

struct CalibrationRows {
  // One per table, in their order; the rows point into it (its size is fixed when it is filled).
  std::vector<LoggedChoice> choices;
  // >= 64 MiB on one node and across nodes; *_small: below 1 MiB, one_node_small by launch mode
  // (one GPU per thread, or -g N); `all`: every row with an out-of-place time.
  std::vector<CalibrationRow> one_node, multi_node, one_node_small, one_node_group_small,
      multi_node_small, all;
};

// Every table's rows, checked: a known collective, its ranks given and on the topology, the
// nodes its first ranks span equal to its own, at most kMaxCalibrationRows rows in all, each
// row's size and count agreeing and its time a measurement. Then refuses (ConfigError naming the
// sweep to measure) a fit the rows cannot determine: no one-node or, on a topology of several
// nodes, no multi-node row >= 64 MiB; with `options.latencies`, none below 1 MiB.
CalibrationRows calibration_rows(const topo::Topology& topology,
                                 const std::vector<NcclTestsTable>& tables,
                                 const CalibrationOptions& options);

}  // namespace twinccl::sim::detail
