// The fitting machinery of calibrate.cc (calibrate_fitting.h).
#include "calibrate_fitting.h"

#include <fmt/format.h>

#include <cmath>

#include "golden_min.h"
#include "twinccl/errors.h"
#include "twinccl/sim/nccl_env_choice.h"

namespace twinccl::sim::detail {

namespace {
using Row = CalibrationRow;
}  // namespace

Prediction predicted(const topo::Topology& t, const Row& r) {
  return predict_logged(t, request_of(*r.table, *r.row), *r.choice, r.table->source);
}
double predicted_us(const topo::Topology& t, const Row& r) { return predicted(t, r).time_us; }

double squared_log_error(const topo::Topology& t, const std::vector<Row>& rows) {
  double sum = 0.0;
  for (const Row& r : rows) {
    const double e = std::log(predicted_us(t, r) / r.measured_us);
    sum += e * e;
  }
  return sum;
}

double fit_scale(const Fitting& t, const std::string& name, double value,
                 const std::vector<Row>& rows) {
  const auto cost = [&](double log_scale) {
    // Where rates between NCCL's speed steps predict alike, the value nearest the topology's.
    return squared_log_error(t.with(name, value * std::exp(log_scale)), rows) +
           1e-6 * log_scale * log_scale;
  };
  return std::exp(detail::golden_min(cost, std::log(1.0 / kMaxFitScale), std::log(kMaxFitScale)));
}

void refuse_at_end(const std::string& name, double before, double after, const topo::Topology& t,
                   const std::vector<Row>& rows) {
  const double scale = after / before;
  if (scale < kMaxFitScale * 0.99 && scale > 1.0 / (kMaxFitScale * 0.99)) return;
  const Row* farthest = nullptr;
  double farthest_us = 0.0, worst = -1.0;
  for (const Row& r : rows) {
    const double us = predicted_us(t, r);
    const double error = std::abs(std::log(us / r.measured_us));
    if (error > worst) farthest = &r, farthest_us = us, worst = error;
  }
  throw ConfigError(fmt::format(
      "calibrate: the logs put {} at {:.4g}, {} x the topology's {:.4g}, the end of what a fit "
      "may move it to: the rows measure what no machine like '{}' does (a wrong --topology, or a "
      "garbled row; the farthest: {}:{}, {:.4g} us measured, {:.4g} us predicted at {:.4g}); if "
      "the machine really is that far from it, give a topology file that describes the machine "
      "as --topology and calibrate from there: start from the closest preset, `twinccl topo show "
      "PRESET [--set K=V ...] --format json -o mine.json`, then edit it (docs/topologies.md "
      "\"Start from a preset, edit, save\"), or use NCCL's topology dump "
      "(NCCL_TOPO_DUMP_FILE=mine.xml)",
      name, after, scale > 1.0 ? "8" : "1/8", before, t.name(), farthest->table->source,
      farthest->row->line, farthest->measured_us, farthest_us, before));
}

double fit_offset_us(const Fitting& t, const std::string& name, const std::vector<Row>& rows,
                     double lo_us, double hi_us) {
  const auto cost = [&](double us) {
    return squared_log_error(t.with(name, us), rows) + 1e-9 * us * us;
  };
  return detail::golden_min(cost, lo_us, hi_us);
}

std::vector<Row> rows_seeing(const Fitting& t, const std::string& name, double value,
                             const std::vector<Row>& rows) {
  const topo::Topology at = t.with(name, value);
  const topo::Topology lower = t.with(name, 0.8 * value), higher = t.with(name, 1.25 * value);
  std::vector<Row> seeing;
  for (const Row& r : rows) {
    const double now = predicted_us(at, r);
    for (const topo::Topology* other : {&lower, &higher}) {
      if (std::abs(predicted_us(*other, r) / now - 1.0) > 0.005) {
        seeing.push_back(r);
        break;
      }
    }
  }
  return seeing;
}
bool rows_see(const Fitting& t, const std::string& name, double value,
              const std::vector<Row>& rows) {
  return !rows_seeing(t, name, value, rows).empty();
}

}  // namespace twinccl::sim::detail
