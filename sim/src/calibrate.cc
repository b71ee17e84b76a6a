// Calibration from nccl-tests logs (calibrate.h).
//
// How it works. Every row of every table is predicted as `twinccl compare` predicts it (the log's
// collective, ranks = the first N GPUs of the topology, its nGpus launch, its NCCL version).
// nvlink_gbps is fitted on every row >= 64 MiB (the one-node tables see it alone; of those, only
// the rows that run on the link, ring or tree, where some do: an NVLS row is NCCL's NVLS price,
// whose error the link cannot be told from), nic_gbps on the tables spanning nodes; then the
// latency regime: host_launch_us on the one-node rows below 1 MiB of one-GPU-per-thread tables,
// group_launch_us on those of `-g N` tables (where the launch and NCCL's intra-node latencies are
// all there is; NCCL's latencies are kept, the launch takes the rest), network_hop_extra_us on the
// multi-node rows below 1 MiB; the four one after the other, three times. Each fit applies a value
// with topo::apply_edits (as `--set` does) and minimises the sum over its rows of
// log(predicted / measured)^2 by golden-section search: a scale s in [1/8, 8] on the rates and the
// launch (on log s), an offset in [-20, 200] us on the network hop (calibrate_fitting.cc). Example:
// 8 GPUs at 80% of the preset's NVLink give s = 0.8 back. The rows, their checks and the refusal of
// logs that cannot determine a fit: calibrate_inputs.cc. nic_gbps moves by NCCL's speed steps, so
// what the step leaves on the rows the NICs bound (a fabric delivering a rate between two steps:
// OCI's MI355X 2-node rows 3.4% fast) is then fitted as the NICs' delivered share, down only
// (nic_delivered_share; NCCL's ranking keeps the full rate). Where the multi-node logs span three
// or more node counts, the bandwidth error's trend with them is reported
// (calibrate_scale_trend.cc).
#include "twinccl/sim/calibrate.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "calibrate_fitting.h"
#include "calibrate_rows.h"
#include "calibrate_scale_trend.h"
#include "golden_min.h"
#include "model.h"
#include "twinccl/errors.h"
#include "twinccl/sim/nccl_env_choice.h"
#include "twinccl/sim/size_regime.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/limits.h"
#include "twinccl/topologies/topology_edit.h"

namespace twinccl::sim {
namespace {

constexpr std::size_t kBandwidthRowBytes = detail::kCalibrationBandwidthRowBytes;
constexpr std::size_t kLatencyRowBytes = detail::kCalibrationLatencyRowBytes;
using Row = detail::CalibrationRow;
using detail::fit_offset_us;
using detail::fit_scale;
using detail::Fitting;
using detail::predicted;
using detail::predicted_us;
using detail::refuse_at_end;
using detail::rows_see;
using detail::rows_seeing;
using detail::squared_log_error;
// host_launch_us fitted from RCCL's 0 (an offset): its lower bound, above 0, since a file's 0
// reads back as "none given" (one cdna3 node: RCCL's base latency alone; else the model's 5 us).
constexpr double kMinFittedLaunchUs = 0.01;
// A fitted NIC share is kept where it is this much (0.5%) below the topology's and lowers the NIC
// rows' squared error by as much: below that it is the search's noise, not the rows' error.
constexpr double kShareResolution = 0.005;

const char* regime_of(std::size_t bytes) { return regime_name(size_regime(bytes)); }

double nvlink_link_gbps(const topo::Topology& t) {
  double gbps = 0.0;
  for (const topo::Link& l : t.links()) {
    if (l.type == topo::LinkType::nvlink) gbps = std::max(gbps, l.bandwidth_gbps);
  }
  return gbps;
}

}  // namespace

Calibration calibrate(const topo::Topology& topology, const std::vector<NcclTestsTable>& tables,
                      const CalibrationOptions& options) {
  const int per_node = std::max(1, topology.summary().gpus_per_node);
  const bool nodes = topology.summary().nodes > 1;  // a one-node topology has no NIC to fit
  const detail::CalibrationRows rows = detail::calibration_rows(topology, tables, options);
  const auto& [choices, one_node, multi_node, one_node_small, one_node_group_small,
               multi_node_small, all] = rows;
  if (options.scale_trend && !nodes) {
    throw ConfigError("calibrate --scale-trend: topology '" + topology.name() +
                      "' has one node: there is no node count to carry a trend to; give the "
                      "multi-node preset or file to predict");
  }
  Calibration c{topology, {}, {}, {}, std::nullopt};
  for (std::size_t i = 0; i < tables.size(); ++i) {
    c.priced_with.push_back({tables[i].source, choices[i].label(), choices[i].from,
                             nccl_version_pricing(tables[i]).note});
  }
  const double nvlink = nvlink_link_gbps(topology);
  if (!(nvlink > 0.0)) {
    throw ConfigError("calibrate: topology '" + topology.name() +
                      "' has no NVLink (or xGMI) link to fit; start from a preset with one");
  }
  // Both rates over every bandwidth row, one at a time (coordinate descent, 3 passes): the
  // one-node rows see NVLink alone, the multi-node rows both, so NVLink is not fitted to one
  // node at the cost of the nodes' rows.
  // Which one-node rows measure the link: a ring (or tree) row's rate is its channels' speed on
  // the NVLink; an NVLS row's is NCCL's NVLS price (heads x speed x nvlsEfficiency, tuning.cc),
  // read from NCCL's own view of the link and only scaled to it, so its error may be NVLS's (its
  // efficiency at that GPU count) as well as the link's, and the rows of one GPU count cannot
  // tell which. Where one-node rows of another algorithm see the link, NVLink is fitted on those
  // alone and the NVLS rows keep their residual (printed); with NVLS rows only (8 H100s), on them.
  const auto is_nvls = [&](const Row& r) {
    return predicted(topology, r).algorithm.starts_with("nvls");
  };
  std::vector<Row> link_rows, nvls_rows;
  for (const Row& r : one_node) (is_nvls(r) ? nvls_rows : link_rows).push_back(r);
  Fitting preset{topology, {}};
  if (link_rows.empty() || !rows_see(preset, "nvlink_gbps", nvlink, link_rows)) {
    link_rows = one_node;
    nvls_rows.clear();
  }
  std::vector<Row> bandwidth_rows = link_rows;
  bandwidth_rows.insert(bandwidth_rows.end(), multi_node.begin(), multi_node.end());
  const double nic = topology.summary().nic_bandwidth_gbps;
  // The launch as predict() adds it to the one-node rows (0 per call in one cdna3 node: RCCL's
  // base latency holds it), fitted from there.
  const detail::HostLaunch launch =
      detail::host_launch_for(topology, detail::view_of(topology, one_node.front().table->ranks));
  const double hop = topology.facts().network_hop_extra_us;
  double nvlink_now = nvlink, nic_now = nic, hop_now = hop;
  detail::HostLaunch launch_now = launch;
  Fitting fit{topology, {}};
  for (int pass = 0; pass < 3; ++pass) {
    // The first pass takes NVLink from the one-node rows alone, which see nothing else: on the
    // multi-node rows a NIC still at the preset's rate would pull it (and where NVLink bounds
    // the nodes' rows, NVLink-tree on 2 nodes, a NIC fit then finds nothing to move).
    nvlink_now =
        nvlink * fit_scale(fit, "nvlink_gbps", nvlink, pass == 0 ? link_rows : bandwidth_rows);
    fit.set("nvlink_gbps", nvlink_now);
    if (nodes) {
      nic_now = nic * fit_scale(fit, "nic_gbps", nic, multi_node);
      fit.set("nic_gbps", nic_now);
    }
    if (!options.latencies) continue;
    // Each launch figure from the rows of its own launch mode (host_launch.h); one mode's logs
    // leave the other's figure as it was.
    if (!one_node_small.empty()) {
      // From 0 (RCCL) a scale cannot move: the value itself, above 0 (0 = the default's 5 us).
      launch_now.call_us =
          launch.call_us > 0.0
              ? launch.call_us * fit_scale(fit, "host_launch_us", launch.call_us, one_node_small)
              : fit_offset_us(fit, "host_launch_us", one_node_small, kMinFittedLaunchUs, 40.0);
      fit.set("host_launch_us", launch_now.call_us);
    }
    if (!one_node_group_small.empty()) {
      launch_now.group_gpu_us =
          launch.group_gpu_us *
          fit_scale(fit, "group_launch_us", launch.group_gpu_us, one_node_group_small);
      fit.set("group_launch_us", launch_now.group_gpu_us);
    }
    if (nodes) {
      hop_now = fit_offset_us(fit, "network_hop_extra_us", multi_node_small);
      fit.set("network_hop_extra_us", hop_now);
    }
  }
  // A rate its rows do not see is not fitted, whatever value the search ended on: the preset's
  // stays, and the result says so, naming what would show it (the one-node rows always see
  // NVLink: nothing else bounds them). The fit of the others stands: those rows do not depend on
  // it.
  std::string nic_note;
  if (nodes && !rows_see(fit, "nic_gbps", nic_now, multi_node)) {
    nic_now = nic;
    fit.set("nic_gbps", nic);
    nic_note = fmt::format(
        "not determined: no multi-node row of 64 MiB or more changes with it (NVLink or NCCL's "
        "NVLS-tree channel cap bounds them, not the NICs); kept the topology's value; measure a "
        "sweep on 4 or more nodes (e.g. `mpirun -np {} -N {} all_reduce_perf -b 64M -e 8G -f 2 "
        "-g 1`), where the NICs bound the tree",
        4 * per_node, per_node);
  }
  refuse_at_end("nvlink_gbps", nvlink, nvlink_now, topology, bandwidth_rows);
  if (nodes && nic_note.empty()) refuse_at_end("nic_gbps", nic, nic_now, topology, multi_node);
  if (options.latencies && !one_node_small.empty() && launch.call_us > 0.0) {
    refuse_at_end("host_launch_us", launch.call_us, launch_now.call_us, topology, one_node_small);
  }
  if (options.latencies && !one_node_group_small.empty() && launch.group_gpu_us > 0.0) {
    refuse_at_end("group_launch_us", launch.group_gpu_us, launch_now.group_gpu_us, topology,
                  one_node_group_small);
  }
  // NCCL's speed steps move nic_gbps a step at a time (rates between two steps predict alike),
  // so the NIC rows may keep an error no step removes: the part of the rate the fabric does not
  // deliver, fitted as the NICs' delivered share on the rows the NIC bounds (only down from the
  // topology's: a share above 1 would move more than the line rate). NCCL's ranking keeps the
  // full rate, as it does on the machine, whose NICs report their line rate.
  const double share_before = detail::nic_delivered_share(topology);
  double share_now = share_before;
  std::vector<Row> nic_rows;
  if (nodes && nic_note.empty()) {
    nic_rows = rows_seeing(fit, "nic_gbps", nic_now, multi_node);
    const double lowest = topo::limits::min_nic_delivered_share;
    const auto cost = [&](double log_share) {
      return squared_log_error(fit.with("nic_delivered_share", std::exp(log_share)), nic_rows);
    };
    const double fitted =
        std::exp(detail::golden_min(cost, std::log(lowest), std::log(share_before)));
    // Kept where it moved and takes a visible error away (a flat cost: rows that do not see it).
    if (!nic_rows.empty() && fitted < share_before * (1.0 - kShareResolution) &&
        cost(std::log(fitted)) < cost(std::log(share_before)) * (1.0 - kShareResolution)) {
      share_now = fitted;
      fit.set("nic_delivered_share", share_now);
    }
  }
  c.topology = topo::apply_edits(topology, fit.edits).topology;
  // What the one NIC rate leaves with the node count, on the rows it bounds (logs of 3 or more
  // node counts; a 2-node NVLS-tree row the NVLink bounds says nothing of the fabric); applied
  // as the NICs' delivered share at the topology's node count when asked.
  if (nodes && nic_note.empty()) {
    c.scale_trend = detail::calibration_scale_trend(
        nic_rows, topology.summary().nodes,
        [&](const Row& r) { return std::log(predicted_us(c.topology, r) / r.measured_us); });
    // Fewer node counts than a trend needs, and a topology beyond them: say what is assumed.
    c.beyond_the_logs = detail::unmeasured_scale_note(nic_rows, topology.summary().nodes, per_node);
  }
  std::optional<CalibratedParameter> share;
  const std::string share_note =
      share_now == share_before
          ? ""
          : fmt::format(
                "fitted on the {} rows the NICs bound, after nic_gbps (whose steps left them "
                "{:.1f}% fast): the share of the NICs' rate the calls moved; NCCL still ranks at "
                "the full rate",
                nic_rows.size(), (1.0 - share_now / share_before) * 100.0);
  if (options.scale_trend) {
    const detail::TrendShare s = detail::trend_share(c.scale_trend, share_now, per_node);
    fit.set("nic_delivered_share", s.after);
    // The trend itself, from the topology's node count: `--set nodes=N` on the file moves the
    // share with it (topology.h nic_share_trend_factor), as calibrating on that topology would.
    fit.set("nic_share_per_doubling",
            std::clamp(c.scale_trend->per_doubling, -topo::limits::max_nic_share_per_doubling,
                       topo::limits::max_nic_share_per_doubling));
    fit.set("nic_share_nodes", topology.node_count());
    c.topology = topo::apply_edits(topology, fit.edits).topology;
    share = CalibratedParameter{"nic_delivered_share",
                                share_before,
                                s.after,
                                c.scale_trend->rows,
                                "",
                                share_note.empty() ? s.note : share_note + "; then " + s.note};
  } else if (!share_note.empty()) {
    share = CalibratedParameter{"nic_delivered_share",
                                share_before,
                                share_now,
                                static_cast<int>(nic_rows.size()),
                                "",
                                share_note};
  }
  c.moved.push_back(
      {"nvlink_gbps", nvlink, nvlink_now, static_cast<int>(bandwidth_rows.size()), "", ""});
  if (!nvls_rows.empty()) {
    c.moved.back().fitted_on = fmt::format(
        "fitted on the {} one-node rows of ring/tree, which run on the link (NCCL's speed "
        "steps make rates within one step predict alike: the one nearest the topology's); not "
        "on the {} of NVLS, priced by NCCL on its own view of the link: their error, NVLS's at "
        "that GPU count or the link's, stays in their residual",
        link_rows.size(), nvls_rows.size());
  }
  if (nodes) {
    c.moved.push_back(
        {"nic_gbps", nic, nic_now, static_cast<int>(multi_node.size()), nic_note, ""});
  }
  if (options.latencies) {
    if (!one_node_small.empty()) {
      c.moved.push_back({"host_launch_us", launch.call_us, launch_now.call_us,
                         static_cast<int>(one_node_small.size()), "", ""});
      if (!(launch.call_us > 0.0) && launch_now.call_us < kMinFittedLaunchUs * 1.01) {
        c.moved.back().fitted_on = fmt::format(
            "hit the fit's lower bound {:g}: the logs' small rows are faster than the model's "
            "latency without any launch cost (RCCL's base latency, analytic_rccl.cc, already "
            "holds one); the file carries {:g}, not 0, which would read back as no value given "
            "(docs/topologies.md host_launch_us); the latency regime's residual above is the "
            "model's",
            kMinFittedLaunchUs, kMinFittedLaunchUs);
      }
    }
    if (!one_node_group_small.empty()) {
      c.moved.push_back({"group_launch_us", launch.group_gpu_us, launch_now.group_gpu_us,
                         static_cast<int>(one_node_group_small.size()), "", ""});
    }
    if (nodes) {
      c.moved.push_back({"network_hop_extra_us", hop, hop_now,
                         static_cast<int>(multi_node_small.size()), "", ""});
    }
  }
  if (share) c.moved.push_back(*share);
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
