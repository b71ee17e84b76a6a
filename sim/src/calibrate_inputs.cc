// The rows a calibration reads, checked and sorted by what they can determine (calibrate_rows.h):
// each log's collective, ranks and nodes against the topology, each row's size and time, and the
// refusal of a fit the logs cannot determine, naming the sweep to measure.
#include <fmt/format.h>

#include <algorithm>

#include "calibrate_rows.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim::detail {
namespace {

// Rows a fit reads: each is predicted some hundreds of times (~0.5 ms a row: 100000 rows, 50 s).
constexpr std::size_t kMaxCalibrationRows = 10000;
// The smallest time nccl-tests prints ("%7.2f" us); below it a row is not a measurement.
constexpr double kMinMeasuredUs = 0.01;

std::string missing_sweep(int ranks_per_node, bool one_node, const char* from = "64M") {
  return one_node ? fmt::format(
                        "a one-node sweep (e.g. `all_reduce_perf -b {} -e 8G -f 2 -g 1` "
                        "on {} GPUs of one node, one process each)",
                        from, ranks_per_node)
                  : fmt::format(
                        "a two-node sweep (e.g. `mpirun -np {} -N {} all_reduce_perf -b "
                        "{} -e 8G -f 2 -g 1`)",
                        2 * ranks_per_node, ranks_per_node, from);
}

}  // namespace

CalibrationRows calibration_rows(const topo::Topology& topology,
                                 const std::vector<NcclTestsTable>& tables,
                                 const CalibrationOptions& options) {
  const int per_node = std::max(1, topology.summary().gpus_per_node);
  const bool nodes = topology.summary().nodes > 1;  // a one-node topology has no NIC to fit
  CalibrationRows rows;
  auto& [choices, one_node, multi_node, one_node_small, one_node_group_small, multi_node_small,
         all] = rows;
  // Each log priced with the algorithm and protocol it ran (NCCL_ALGO / NCCL_PROTO): a forced
  // ring on 2 nodes shows the NICs where NCCL's own NVLS-tree or tree would not.
  choices.reserve(tables.size());
  std::size_t rows_given = 0;
  for (const NcclTestsTable& table : tables) {
    if (!table.kind) {
      throw ConfigError(
          fmt::format("calibrate: {}: the collective is not known ('{}'); give a "
                      "log of all_reduce, all_gather or reduce_scatter",
                      table.source, table.collective));
    }
    if (table.ranks <= 0) {
      throw ConfigError(fmt::format(
          "calibrate: {}: the log does not say how many ranks ran (no device list); give them "
          "(twinccl calibrate --ranks N,... --nodes M,..., one per log)",
          table.source));
    }
    if (table.ranks > topology.gpu_count()) {
      throw ConfigError(fmt::format("calibrate: {}: {} ranks, topology '{}' has {} GPUs",
                                    table.source, table.ranks, topology.name(),
                                    topology.gpu_count()));
    }
    // The log's nodes (its device block, or --nodes) must be the nodes its ranks take on the
    // topology, or every row is priced on another machine (16 ranks of 2 nodes as one node).
    const int spanned = nodes_spanned(topology, table.ranks);
    if (table.nodes > 0 && spanned != table.nodes) {
      throw ConfigError(fmt::format(
          "calibrate: {}: the log ran {} ranks on {} node(s), but the first {} GPUs of topology "
          "'{}' span {} node(s); use a topology whose first {} GPUs span {} (or --nodes if the "
          "log's device block is wrong){}",
          table.source, table.ranks, table.nodes, table.ranks, topology.name(), spanned,
          table.ranks, table.nodes, nvlink_domain_hint(table, spanned)));
    }
    rows_given += table.rows.size();
    if (rows_given > kMaxCalibrationRows) {
      throw ConfigError(fmt::format(
          "calibrate: more than {} rows over the logs (at {}); a fit reads a one-node and a "
          "two-node sweep (some 30 rows each): give fewer logs",
          kMaxCalibrationRows, table.source));
    }
    choices.push_back(logged_choice(table));
    const bool spans = topology.vertex(topology.gpu(table.ranks - 1)).node !=
                       topology.vertex(topology.gpu(0)).node;
    for (const NcclTestsRow& row : table.rows) {
      if (!row.out_of_place || row.out_of_place->time_us <= 0.0 || row.count == 0) continue;
      check_row_size(table, row);  // a row read as another size would move the fit silently
      if (row.out_of_place->time_us < kMinMeasuredUs) {
        throw ConfigError(fmt::format(
            "calibrate: {}:{}: a measured time of {:.3g} us, below the {} us nccl-tests prints; "
            "not a measurement: fix or remove the row",
            table.source, row.line, row.out_of_place->time_us, kMinMeasuredUs));
      }
      const CalibrationRow r{&table, &row, row.out_of_place->time_us, &choices.back()};
      all.push_back(r);
      if (row.size_bytes >= kCalibrationBandwidthRowBytes)
        (spans ? multi_node : one_node).push_back(r);
      if (row.size_bytes < kCalibrationLatencyRowBytes) {
        (spans                        ? multi_node_small
         : table.gpus_per_thread <= 1 ? one_node_small
                                      : one_node_group_small)
            .push_back(r);
      }
    }
  }
  if (one_node.empty() || (nodes && multi_node.empty())) {
    throw ConfigError(fmt::format(
        "calibrate: the logs cannot determine {}: no {} table has rows of 64 MiB or more; measure "
        "{}",
        one_node.empty() ? "nvlink_gbps (the GPUs' NVLink)" : "nic_gbps (the NICs' rate)",
        one_node.empty() ? "one-node" : "multi-node", missing_sweep(per_node, one_node.empty())));
  }
  const bool one_small = !one_node_small.empty() || !one_node_group_small.empty();
  if (options.latencies && (!one_small || (nodes && multi_node_small.empty()))) {
    const bool one = !one_small;
    throw ConfigError(fmt::format(
        "calibrate: the logs cannot determine {}: no {} table has rows below 1 MiB; measure {}, "
        "or fit the bandwidths alone (--bandwidth-only)",
        one ? "host_launch_us (the host's launch cost per call)"
            : "network_hop_extra_us (the network's per-message cost)",
        one ? "one-node" : "multi-node", missing_sweep(per_node, one, "8")));
  }
  return rows;
}

}  // namespace twinccl::sim::detail
