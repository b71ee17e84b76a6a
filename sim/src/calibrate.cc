// Calibration from nccl-tests logs (calibrate.h).
//
// How it works. Every row of every table is predicted as `twinccl compare` predicts it (the log's
// collective, ranks = the first N GPUs of the topology, its nGpus launch, its NCCL version).
// nvlink_gbps is fitted on every row >= 64 MiB (the one-node tables see it alone), nic_gbps on
// the tables spanning nodes, one after the other three times. Each fit is one scale s on the
// parameter's value
// in the topology (applied with topo::apply_edits, as `--set` does), minimising
// sum over rows >= 64 MiB of log(predicted(s) / measured)^2 by golden-section search on log s
// in [1/8, 8]. Example: 8 GPUs at 80% of the preset's NVLink give s = 0.8 back.
#include "twinccl/sim/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "twinccl/errors.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/topology_edit.h"

namespace twinccl::sim {
namespace {

constexpr std::size_t kBandwidthRowBytes = std::size_t{64} << 20;
constexpr std::size_t kLatencyRowBytes = std::size_t{1} << 20;

const char* regime_of(std::size_t bytes) {
  return bytes < kLatencyRowBytes ? "latency" : bytes < kBandwidthRowBytes ? "middle" : "bandwidth";
}

struct Row {
  const NcclTestsTable* table = nullptr;
  const NcclTestsRow* row = nullptr;
  double measured_us = 0.0;
};

double predicted_us(const topo::Topology& t, const Row& r) {
  Request request;
  request.spec.kind = *r.table->kind;
  request.spec.nranks = r.table->ranks;
  request.spec.count = r.row->count;
  request.spec.root = r.row->root >= 0 && r.row->root < r.table->ranks ? r.row->root : 0;
  request.dtype = r.row->dtype;
  request.gpus_per_thread = std::max(1, r.table->gpus_per_thread);
  request.nccl_version = nccl_version_code(r.table->nccl_version);
  return predict(t, request).time_us;
}

topo::Topology with(const topo::Topology& t, const std::string& name, double value) {
  topo::TopologyEdits edits;
  edits.settings.push_back({name, value});
  return topo::apply_edits(t, edits).topology;
}

// The scale in [1/8, 8] minimising the squared log error of `rows` with `name` = value x scale.
double fit_scale(const topo::Topology& t, const std::string& name, double value,
                 const std::vector<Row>& rows) {
  const auto cost = [&](double log_scale) {
    const topo::Topology candidate = with(t, name, value * std::exp(log_scale));
    double sum = 0.0;
    for (const Row& r : rows) {
      const double e = std::log(predicted_us(candidate, r) / r.measured_us);
      sum += e * e;
    }
    // Where rates between NCCL's speed steps predict alike, the value nearest the topology's.
    return sum + 1e-6 * log_scale * log_scale;
  };
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double lo = std::log(1.0 / 8.0), hi = std::log(8.0);
  double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
  double fa = cost(a), fb = cost(b);
  for (int i = 0; i < 40 && hi - lo > 1e-5; ++i) {
    if (fa < fb) {
      hi = b, b = a, fb = fa;
      a = hi - phi * (hi - lo), fa = cost(a);
    } else {
      lo = a, a = b, fa = fb;
      b = lo + phi * (hi - lo), fb = cost(b);
    }
  }
  return std::exp((lo + hi) / 2.0);
}

double nvlink_link_gbps(const topo::Topology& t) {
  double gbps = 0.0;
  for (const topo::Link& l : t.links()) {
    if (l.type == topo::LinkType::nvlink) gbps = std::max(gbps, l.bandwidth_gbps);
  }
  return gbps;
}

std::string missing_sweep(int ranks_per_node, bool one_node) {
  return one_node ? fmt::format(
                        "a one-node sweep (e.g. `all_reduce_perf -b 64M -e 8G -f 2 -g 1` "
                        "on {} GPUs of one node, one process each)",
                        ranks_per_node)
                  : fmt::format(
                        "a two-node sweep (e.g. `mpirun -np {} -N {} all_reduce_perf -b "
                        "64M -e 8G -f 2 -g 1`)",
                        2 * ranks_per_node, ranks_per_node);
}

}  // namespace

Calibration calibrate(const topo::Topology& topology, const std::vector<NcclTestsTable>& tables) {
  const int per_node = std::max(1, topology.summary().gpus_per_node);
  std::vector<Row> one_node, multi_node, all;
  for (const NcclTestsTable& table : tables) {
    if (!table.kind) {
      throw ConfigError(
          fmt::format("calibrate: {}: the collective is not known ('{}'); give a "
                      "log of all_reduce, all_gather or reduce_scatter",
                      table.source, table.collective));
    }
    if (table.ranks <= 0) {
      throw ConfigError(fmt::format(
          "calibrate: {}: the log does not say how many ranks ran (no device list)", table.source));
    }
    if (table.ranks > topology.gpu_count()) {
      throw ConfigError(fmt::format("calibrate: {}: {} ranks, topology '{}' has {} GPUs",
                                    table.source, table.ranks, topology.name(),
                                    topology.gpu_count()));
    }
    const bool spans = topology.vertex(topology.gpu(table.ranks - 1)).node !=
                       topology.vertex(topology.gpu(0)).node;
    for (const NcclTestsRow& row : table.rows) {
      if (!row.out_of_place || row.out_of_place->time_us <= 0.0 || row.count == 0) continue;
      const Row r{&table, &row, row.out_of_place->time_us};
      all.push_back(r);
      if (row.size_bytes >= kBandwidthRowBytes) (spans ? multi_node : one_node).push_back(r);
    }
  }
  if (one_node.empty() || multi_node.empty()) {
    throw ConfigError(fmt::format(
        "calibrate: the logs cannot determine {}: no {} table has rows of 64 MiB or more; measure "
        "{}",
        one_node.empty() ? "nvlink_gbps (the GPUs' NVLink)" : "nic_gbps (the NICs' rate)",
        one_node.empty() ? "one-node" : "multi-node", missing_sweep(per_node, one_node.empty())));
  }
  Calibration c{topology, {}, {}};
  const double nvlink = nvlink_link_gbps(topology);
  if (!(nvlink > 0.0)) {
    throw ConfigError("calibrate: topology '" + topology.name() +
                      "' has no NVLink (or xGMI) link to fit; start from a preset with one");
  }
  // Both rates over every bandwidth row, one at a time (coordinate descent, 3 passes): the
  // one-node rows see NVLink alone, the multi-node rows both, so NVLink is not fitted to one
  // node at the cost of the nodes' rows.
  std::vector<Row> bandwidth_rows = one_node;
  bandwidth_rows.insert(bandwidth_rows.end(), multi_node.begin(), multi_node.end());
  const double nic = topology.summary().nic_bandwidth_gbps;
  double nvlink_now = nvlink, nic_now = nic;
  for (int pass = 0; pass < 3; ++pass) {
    nvlink_now = nvlink * fit_scale(c.topology, "nvlink_gbps", nvlink, bandwidth_rows);
    c.topology = with(c.topology, "nvlink_gbps", nvlink_now);
    nic_now = nic * fit_scale(c.topology, "nic_gbps", nic, multi_node);
    c.topology = with(c.topology, "nic_gbps", nic_now);
  }
  c.moved.push_back({"nvlink_gbps", nvlink, nvlink_now, static_cast<int>(bandwidth_rows.size())});
  c.moved.push_back({"nic_gbps", nic, nic_now, static_cast<int>(multi_node.size())});
  // Residual per log and regime, before and after: geometric-mean error of every row.
  for (const NcclTestsTable& table : tables) {
    for (const char* regime : {"latency", "middle", "bandwidth"}) {
      CalibrationResidual res{table.source, regime, 0, 0.0, 0.0};
      for (const Row& r : all) {
        if (r.table != &table || std::string(regime_of(r.row->size_bytes)) != regime) continue;
        ++res.rows;
        res.before += std::log(predicted_us(topology, r) / r.measured_us);
        res.after += std::log(predicted_us(c.topology, r) / r.measured_us);
      }
      if (res.rows == 0) continue;
      res.before = std::exp(res.before / res.rows) - 1.0;
      res.after = std::exp(res.after / res.rows) - 1.0;
      c.residuals.push_back(res);
    }
  }
  return c;
}

}  // namespace twinccl::sim
