// Internal: the fitting machinery of calibrate.cc, one parameter at a time on a topology being
// fitted (Fitting), each fit minimising the squared log error of its rows' predicted time.
//
//   detail::Fitting fit{topology, {}};
//   const double s = detail::fit_scale(fit, "nic_gbps", 50.0, multi_node_rows);  // 50 x s fits
//   fit.set("nic_gbps", 50.0 * s);
#pragma once

#include <string>
#include <vector>

#include "calibrate_rows.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/topology_edit.h"

namespace twinccl::sim::detail {

// fit_scale's range: 1/8..8 x the topology's value.
inline constexpr double kMaxFitScale = 8.0;

// A row as `twinccl compare` predicts it: its log's collective, ranks, launch, NCCL version and
// NCCL_ALGO / NCCL_PROTO.
Prediction predicted(const topo::Topology& t, const CalibrationRow& r);
double predicted_us(const topo::Topology& t, const CalibrationRow& r);

// The topology being fitted: the user's with every value fitted so far, applied as one edit of
// it, so its name stays "<topology>+<the settings>" (edits of edits grew it past the name cap).
struct Fitting {
  topo::Topology base;
  topo::TopologyEdits edits;
  topo::Topology with(const std::string& name, double value) const {
    topo::TopologyEdits e = edits;
    std::erase_if(e.settings, [&](const topo::Setting& s) { return s.name == name; });
    e.settings.push_back({name, value});
    return topo::apply_edits(base, e).topology;
  }
  void set(const std::string& name, double value) {
    std::erase_if(edits.settings, [&](const topo::Setting& s) { return s.name == name; });
    edits.settings.push_back({name, value});
  }
};

double squared_log_error(const topo::Topology& t, const std::vector<CalibrationRow>& rows);

// The scale in [1/8, 8] minimising the squared log error of `rows` with `name` = value x scale;
// where rates between NCCL's speed steps predict alike, the value nearest the topology's.
double fit_scale(const Fitting& t, const std::string& name, double value,
                 const std::vector<CalibrationRow>& rows);

// The value (us) in [lo_us, hi_us] minimising the squared log error of `rows` with `name` = it
// (an offset: [-20, 200]).
double fit_offset_us(const Fitting& t, const std::string& name,
                     const std::vector<CalibrationRow>& rows, double lo_us = -20.0,
                     double hi_us = 200.0);

// A scale the search ended at an end of (1/8 or 8 x the topology's value) is not a fit: the rows
// want a value no machine like the topology has (a wrong --topology, or garbled rows). Throws
// ConfigError naming the row farthest from the prediction at the topology's value.
void refuse_at_end(const std::string& name, double before, double after, const topo::Topology& t,
                   const std::vector<CalibrationRow>& rows);

// Those of `rows` that see `name` near `value`: some row's time moves by more than 0.5% when it
// is 0.8 or 1.25 x that. A rate that bounds none of its rows (a NIC behind NVLink, NVLS-tree's
// in-node stage on 2 nodes) leaves a flat cost, where the search's end says nothing.
std::vector<CalibrationRow> rows_seeing(const Fitting& t, const std::string& name, double value,
                                        const std::vector<CalibrationRow>& rows);
bool rows_see(const Fitting& t, const std::string& name, double value,
              const std::vector<CalibrationRow>& rows);

}  // namespace twinccl::sim::detail
