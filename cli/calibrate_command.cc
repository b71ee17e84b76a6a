// `twinccl calibrate LOG... --topology T -o mycluster.json [--collective C] [--bandwidth-only]`:
// fits the NVLink and NIC rates of T, the host's launch cost per GPU and the network's per-message
// cost to the user's own nccl-tests logs (stdout or -J; typically a one-node and a two-node
// all_reduce sweep from 8 B, sim/calibrate.h), prints what moved and the error per log and size
// regime before and after, and writes the fitted topology as a topology file that perf, replay,
// whatif and compare take with --topology. Measure two nodes, predict 64:
//   twinccl calibrate 1node.log 2node.log --topology aws-p5-2 -o p5.json
//   twinccl perf all_reduce --backend sim --topology p5.json --set nodes=64 ...
// Logs published without their device block (tables cut to the largest rows) name their ranks
// and nodes per log, in order: `calibrate 1node.log 2node.log --ranks 8,16 --nodes 1,2 ...`.
// Each log is priced with the algorithm and protocol it ran: its NCCL_ALGO / NCCL_PROTO as NCCL
// printed them (NCCL_DEBUG=INFO: "NCCL INFO NCCL_ALGO set by environment to Ring") or as a script
// dumped its environment ("NCCL_ALGO=Ring"), or given per log, one option each in log order,
// in NCCL's own syntax: `calibrate 1node.log 2node-ring.log --algo - --algo Ring`. (One option per
// log, not one comma list as --ranks: NCCL_ALGO's own value is a comma list, "NVLS,NVLSTree",
// among which NCCL chooses.) A forced 2-node ring shows the NICs' rate, which NCCL's own 2-node
// choice (tree, NVLS-tree) often hides.
// A fit the logs cannot determine is refused (exit 2) naming the sweep to measure.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <utility>
#include <vector>

#include "commands.h"
#include "compare_ran_note.h"
#include "nccl_debug_files.h"
#include "output_file.h"
#include "twinccl/errors.h"
#include "twinccl/sim/calibrate.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

namespace twinccl::cli {

CLI::App* add_calibrate_command(CLI::App& app, CalibrateOptions& o) {
  CLI::App* cmd = app.add_subcommand("calibrate",
                                     "fit a topology's NVLink and NIC rates, host launch and "
                                     "network latency to your nccl-tests logs (a 1-node and a "
                                     "2-node sweep)");
  cmd->add_option("logs", o.logs, "nccl-tests output files (stdout table or -J JSON)")->required();
  cmd->add_option("--topology,-t", o.topology, "preset or topology file the logs were measured on")
      ->required();
  cmd->add_option("--output,-o", o.output, "the fitted topology file to write (.json)")->required();
  cmd->add_option("--collective", o.collective,
                  "the collective, when a log does not name it (all_reduce, ...)");
  cmd->add_flag("--bandwidth-only", o.bandwidth_only,
                "fit nvlink_gbps and nic_gbps alone (logs without rows below 1 MiB)");
  cmd->add_flag("--scale-trend", o.scale_trend,
                "carry the bandwidth error's trend with the node count (logs of 3 or more node "
                "counts) to the topology's node count, as its nic_delivered_share");
  cmd->add_option("--ranks", o.ranks,
                  "ranks of each log, in the order of the logs (e.g. 8,16), where its device "
                  "block is missing or truncated; 0 = the log's own")
      ->delimiter(',')
      ->check(CLI::Range(0, sim::kNcclTestsMaxRanks));
  cmd->add_option("--nodes", o.nodes,
                  "nodes of each log, in the order of the logs (e.g. 1,2), as --ranks")
      ->delimiter(',')
      ->check(CLI::Range(0, sim::kNcclTestsMaxRanks));
  cmd->add_option("--algo", o.algorithms,
                  "NCCL_ALGO each log ran with, one option per log in their order, NCCL's syntax "
                  "(Ring, Tree, NVLS, NVLSTree, PAT or a list NCCL chose among: NVLS,NVLSTree; - = "
                  "the log's own); default: what the log prints, else NCCL's choice");
  cmd->add_option(
      "--proto", o.protocols,
      "NCCL_PROTO each log ran with (LL, LL128, Simple), one option per log, as --algo");
  add_nccl_debug_option(cmd, o.nccl_debug);
  return cmd;
}

namespace {
// The bandwidth error's trend with the node count (calibrate_scale_trend.cc), where the logs span
// three or more node counts; beyond the logs' largest, what it gives at the topology's.
void print_scale_trend(const sim::CalibrationScaleTrend& t, bool applied, std::ostream& out) {
  out << fmt::format(
      "# with the node count ({} nodes; {} rows >= 64 MiB the NICs bound): after the fit, "
      "predicted / measured moves {:+.1f}% per doubling of nodes; at the topology's {} nodes the "
      "trend gives {:+.1f}%\n",
      fmt::join(t.nodes, ", "), t.rows, t.per_doubling * 100.0, t.topology_nodes,
      t.at_topology * 100.0);
  if (!applied && t.topology_nodes > t.nodes.back() && std::abs(t.per_doubling) >= 0.01) {
    out << fmt::format(
        "#   beyond the logs' {} nodes the file's one NIC rate does not carry that trend: its "
        "predictions at {} nodes are about {:.0f}% too {} if the error keeps that trend (a "
        "fabric that delivers less with more nodes; a sweep at more nodes shows it; --scale-trend "
        "carries it into the file)\n",
        t.nodes.back(), t.topology_nodes, std::abs(t.at_topology) * 100.0,
        t.at_topology < 0.0 ? "fast" : "slow");
  }
}
}  // namespace

int run_calibrate_command(const CalibrateOptions& o, std::ostream& out) {
  check_output_path("--output", o.output);
  const topo::Topology topology = topo::load_topology(o.topology);
  for (const auto& [flag, values] : {std::pair{"--ranks", &o.ranks}, {"--nodes", &o.nodes}}) {
    if (!values->empty() && values->size() != o.logs.size()) {
      throw ConfigError(
          fmt::format("calibrate: {} gives {} value(s) for {} log(s); give one per "
                      "log, in their order (0 = the log's own)",
                      flag, values->size(), o.logs.size()));
    }
  }
  struct PerLog {
    const char* flag;
    const std::vector<std::string>* values;
    const char* example;
  };
  for (const PerLog& p :
       {PerLog{"--algo", &o.algorithms, "Ring"}, PerLog{"--proto", &o.protocols, "Simple"}}) {
    if (!p.values->empty() && p.values->size() != o.logs.size()) {
      throw ConfigError(fmt::format(
          "calibrate: {} given {} time(s) for {} log(s); give it once per log, in their order "
          "(- = what the log says), e.g. `{} - {} {}`; a comma inside one value is NCCL's list "
          "NCCL chooses among",
          p.flag, p.values->size(), o.logs.size(), p.flag, p.flag, p.example));
    }
  }
  const auto per_log = [](const std::vector<std::string>& v, std::size_t i) {
    return v.empty() || v[i] == "-" ? std::string() : v[i];
  };
  std::vector<sim::NcclTestsTable> tables;
  std::size_t rows_read = 0;  // capped over all logs together, as compare's
  for (std::size_t i = 0; i < o.logs.size(); ++i) {
    sim::NcclTestsParseOptions parse;
    parse.collective = o.collective;
    parse.ranks = o.ranks.empty() ? 0 : o.ranks[i];
    parse.nodes = o.nodes.empty() ? 0 : o.nodes[i];
    parse.nccl_algo = per_log(o.algorithms, i);
    parse.nccl_proto = per_log(o.protocols, i);
    for (sim::NcclTestsTable& t : read_nccl_tests_logs({o.logs[i]}, parse, &rows_read))
      tables.push_back(std::move(t));
  }
  apply_nccl_debug_files(tables, o.nccl_debug);
  sim::CalibrationOptions options;
  options.latencies = !o.bandwidth_only;
  options.scale_trend = o.scale_trend;
  const sim::Calibration c = sim::calibrate(topology, tables, options);
  out << fmt::format("# calibrate {} on {} log table{}\n", o.topology, tables.size(),
                     tables.size() == 1 ? "" : "s");
  for (const sim::CalibrationLog& l : c.priced_with) {
    out << fmt::format("# {} priced with {}{}\n", l.log, l.priced_with,
                       l.from.empty() ? " (no NCCL_ALGO / NCCL_PROTO in the log; --algo gives it)"
                                      : " (" + l.from + ")");
    if (!l.nccl_version_note.empty()) out << "# note: " << l.nccl_version_note << "\n";
  }
  for (const sim::NcclTestsTable& t : tables) {  // a log that looks run with another algorithm
    const std::string look_alike = look_alike_for(topology, t);
    if (!look_alike.empty()) {
      out << fmt::format(
          "# note: {}: {}; the fit prices it with NCCL's choice as the simulator reads it, so "
          "its parameters would take up that difference\n",
          t.source, look_alike);
    }
  }
  for (const sim::NcclTestsTable& t : tables) {  // NCCL's per-call lines (nccl_ran_choice.h)
    std::size_t ran = 0;
    std::string from;
    for (const sim::NcclTestsRow& r : t.rows) {
      if (r.ran_algorithm.empty()) continue;
      if (from.empty()) from = r.ran_from;
      ++ran;
    }
    if (ran > 0) {
      out << fmt::format(
          "# {}: {} of {} rows priced as NCCL ran them (its NCCL_DEBUG_SUBSYS=TUNING lines, from "
          "{}), over the choice above\n",
          t.source, ran, t.rows.size(), from);
    }
  }
  out << fmt::format("# {:<20} {:>10} {:>10} {:>9} {:>6}\n", "parameter", "before", "after",
                     "moved", "rows");
  for (const sim::CalibratedParameter& p : c.moved) {
    // An offset (network_hop_extra_us, 0 before) moves by a difference, a rate by a ratio.
    const std::string moved = p.before != 0.0
                                  ? fmt::format("{:+.1f}%", (p.after / p.before - 1.0) * 100.0)
                                  : fmt::format("{:+.2f}", p.after - p.before);
    out << fmt::format("  {:<20} {:>10.2f} {:>10.2f} {:>9} {:>6}\n", p.name, p.before, p.after,
                       moved, p.rows);
    if (!p.not_determined.empty()) out << fmt::format("#   {}: {}\n", p.name, p.not_determined);
    if (!p.fitted_on.empty()) out << fmt::format("#   {}: {}\n", p.name, p.fitted_on);
  }
  out << "# geometric-mean error of predicted / measured time, per log and size regime\n";
  // The log column is as wide as its longest path (at least 48), so the columns stay aligned.
  std::size_t log_width = 48;
  for (const sim::CalibrationResidual& r : c.residuals)
    log_width = std::max(log_width, r.log.size());
  out << fmt::format("# {:<{}} {:<10} {:>5} {:>9} {:>9}\n", "log", log_width, "regime", "rows",
                     "before", "after");
  for (const sim::CalibrationResidual& r : c.residuals) {
    out << fmt::format("  {:<{}} {:<10} {:>5} {:>+8.1f}% {:>+8.1f}%\n", r.log, log_width, r.regime,
                       r.rows, r.before * 100.0, r.after * 100.0);
  }
  if (c.scale_trend) print_scale_trend(*c.scale_trend, o.scale_trend, out);
  if (!c.beyond_the_logs.empty()) out << "# beyond the logs: " << c.beyond_the_logs << "\n";
  // The latency regime's rows are named only where the table has some (8G-16G logs have none).
  const bool latency_rows = std::any_of(c.residuals.begin(), c.residuals.end(),
                                        [](const auto& r) { return r.regime == "latency"; });
  out << (!o.bandwidth_only ? "# not fitted: NCCL's intra-node latencies (the one-node small rows "
                              "cannot tell them from the launch, which takes the difference)\n"
          : latency_rows
              ? "# not fitted (--bandwidth-only): the host launch and the network's per-message "
                "cost (the latency regime's error above is what they leave)\n"
              : "# not fitted (--bandwidth-only): the host launch and the network's per-message "
                "cost\n");
  out << "# NCCL's inter-node speed list makes NIC rates between its steps predict alike\n";
  write_output_file("--output", o.output,
                    [&](std::ostream& f) { f << topo::to_json(c.topology) << "\n"; });
  // A multi-node file grows with its fit (`--set nodes=N`: topologies/src/topology_regrow.h).
  out << "# wrote " << o.output << " (use it as --topology"
      << (c.topology.node_count() > 1 ? "; --set nodes=N carries the fit to N nodes of its family"
                                      : "")
      << ")\n";
  return 0;
}

}  // namespace twinccl::cli
