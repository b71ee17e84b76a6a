// Published cluster figures as the nccl-tests tables `twinccl calibrate` reads, and how a fit is
// judged on them: the one helper of test_calibrate_cluster_figures.cc and
// test_calibrate_scale_trend.cc (provenance in the first's header).
//
//   const NcclTestsTable t = table_of({"all_reduce", "ring", 2, 16 * kGiB, 344.7}, 1, "2.29.7");
//   error_of(topology, figure, 1, "2.29.7");  // predicted / measured - 1
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "twinccl/sim/calibrate.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

namespace twinccl_test::calibrate_figures {

using namespace twinccl;
using namespace twinccl::sim;

inline constexpr std::size_t kGiB = std::size_t{1} << 30;

struct Figure {
  const char* collective;  // "all_reduce", "all_gather", "reduce_scatter"
  const char* algorithm;   // the run's NCCL_ALGO ("" = NCCL's choice)
  int nodes;
  std::size_t size_bytes;  // nccl-tests' size column
  double busbw_gbps;
};

// One figure as the nccl-tests table its run printed: 8 GPUs a node, float32, out of place.
inline NcclTestsTable table_of(const Figure& f, int gpus_per_thread, const char* nccl_version) {
  NcclTestsTable t;
  t.source = std::string(f.collective) + " " + std::to_string(f.nodes) + " nodes";
  t.collective = f.collective;
  const std::string c = f.collective;
  t.kind = c == "all_reduce"   ? OpKind::all_reduce
           : c == "all_gather" ? OpKind::all_gather
                               : OpKind::reduce_scatter;
  t.ranks = 8 * f.nodes;
  t.nodes = f.nodes;
  t.gpus_per_thread = gpus_per_thread;
  t.nccl_version = nccl_version;
  t.complete = true;
  const double n = t.ranks;
  const double factor = c == "all_reduce" ? 2.0 * (n - 1) / n : (n - 1) / n;
  NcclTestsRow row;
  row.size_bytes = f.size_bytes;
  row.count = c == "all_reduce" ? f.size_bytes / 4 : f.size_bytes / 4 / t.ranks;
  row.redop = c == "all_gather" ? "none" : "sum";
  NcclTestsBlock block;
  block.busbw_gbps = f.busbw_gbps;
  block.algbw_gbps = f.busbw_gbps / factor;
  block.time_us = double(f.size_bytes) / (block.algbw_gbps * 1e3);
  row.out_of_place = block;
  t.rows.push_back(row);
  return t;
}

// predicted / measured - 1 of one figure on `topology`, its forced algorithm as the run's.
inline double error_of(const topo::Topology& topology, const Figure& f, int gpus_per_thread,
                       const char* nccl_version) {
  const NcclTestsTable t = table_of(f, gpus_per_thread, nccl_version);
  Request r = request_of(t, t.rows[0]);
  r.algorithm = f.algorithm;
  return predict(topology, r).time_us / t.rows[0].out_of_place->time_us - 1.0;
}

// One log per figure, as `twinccl calibrate` reads them; a figure's forced algorithm is the log's
// NCCL_ALGO when `algo_as_logged` (a log printing "NCCL_ALGO set by environment to Ring"), else
// NCCL's own choice (the run's algorithm was NCCL's).
inline std::vector<NcclTestsTable> logs_of(const std::vector<Figure>& fit, int gpus_per_thread,
                                           const char* nccl_version, bool algo_as_logged = false) {
  std::vector<NcclTestsTable> logs;
  for (const Figure& f : fit) {
    logs.push_back(table_of(f, gpus_per_thread, nccl_version));
    if (algo_as_logged && *f.algorithm) logs.back().nccl_algo = f.algorithm;
  }
  return logs;
}

// The geometric mean of (1 + error) over the rows added, minus 1.
struct GeoMean {
  double log_sum = 0.0;
  int rows = 0;
  void add(double error) { log_sum += std::log(1.0 + error), ++rows; }
  double value() const { return rows > 0 ? std::exp(log_sum / rows) - 1.0 : 0.0; }
};

// Each held-out figure's error on the preset and on the fitted topology, handed to
// `check(figure, before, after)` with the row named (INFO); a row it returns true for is added to
// `mean` (its error after the fit).
template <class Check>
void judge(const topo::Topology& preset, const topo::Topology& fitted,
           const std::vector<Figure>& figures, int gpus_per_thread, const char* nccl_version,
           GeoMean& mean, Check check) {
  for (const Figure& f : figures) {
    const double before = error_of(preset, f, gpus_per_thread, nccl_version),
                 after = error_of(fitted, f, gpus_per_thread, nccl_version);
    INFO(f.collective << " " << (*f.algorithm ? f.algorithm : "default") << " " << f.nodes
                      << " nodes, " << f.size_bytes / kGiB << " GiB: " << before * 100 << "% -> "
                      << after * 100 << "%");
    if (check(f, before, after)) mean.add(after);
  }
}

// use3a-ss's 1-node row of NCCL's choice and its forced-ring runs at 2, 4 and 8 nodes
// (ib-multinode.csv rows 53 - 55, busbw = 2 (n-1)/n x 16 GiB / time): a ring rate falling with
// the node count.
inline std::vector<Figure> use3a_ss_rings_to_8_nodes() {
  return {{"all_reduce", "", 1, 16 * kGiB, 840.8},
          {"all_reduce", "ring", 2, 16 * kGiB, 344.7},
          {"all_reduce", "ring", 4, 16 * kGiB, 334.8},
          {"all_reduce", "ring", 8, 16 * kGiB, 322.6}};
}

inline const CalibratedParameter& parameter(const Calibration& c, const char* name) {
  for (const CalibratedParameter& p : c.moved) {
    if (p.name == name) return p;
  }
  FAIL("calibrate did not list " << name);
  return c.moved.front();
}

}  // namespace twinccl_test::calibrate_figures
