// `twinccl replay TRACE --topology A [--topology B ...] [--trace out.json] [--links]`: replays a
// recorded trace on each topology (one SimGrid simulation each) and prints one comparison table,
// fastest first; --links adds each topology's busiest links, --trace writes Perfetto timelines
// (one topology: that file; several: NAME inserted before the extension, numbered when alike).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <ostream>

#include "commands.h"
#include "nccl_list_flags.h"
#include "output_file.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::cli {

CLI::App* add_replay_command(CLI::App& app, ReplayCommandOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("replay", "replay a recorded trace on topologies and compare them");
  cmd->add_option("trace", o.trace, "trace file written by an emulated run (TWINCCL_TRACE)")
      ->required();
  cmd->add_option("--topology,-t", o.topologies,
                  "preset name or topology file (repeat to compare), optionally with its own "
                  "what-if edits: 'NAME --set K=V --fail PART'")
      ->required();
  cmd->add_option("--trace", o.timeline, "write a Perfetto timeline (JSON) of each replay");
  cmd->add_flag("--links", o.links, "print the busiest links of each topology");
  cmd->add_option("--algo", o.algorithm,
                  "replay every collective with this algorithm where it exists (or one "
                  "NCCL name: Ring, NVLSTree, ...)");
  cmd->add_option("--proto", o.protocol,
                  "force a protocol where the algorithm runs it: LL, LL128 or Simple (default: the "
                  "tuner's choice)");
  add_topology_flags(cmd, o.edits);
  return cmd;
}

Replays replay_on_each(const std::string& trace_path, const std::vector<LoadedTopology>& topologies,
                       const std::string& algorithm, const std::string& protocol) {
  sim::ReplayOptions options;
  options.algorithm = algorithm;
  if (!protocol.empty()) options.protocol = sim::parse_protocol(protocol);
  try {
    Replays r{sim::load_trace(trace_path), {}};
    for (const LoadedTopology& t : topologies) {
      options.rank_compute_slowdown = compute_slowdown(t);
      r.results.push_back(sim::replay(r.trace, t.topology, options));
    }
    return r;
  } catch (const DeadlockError& e) {  // a trace whose ranks wait for each other: bad input, exit 2
    throw ConfigError(e.what());
  }
}

int run_replay_command(const ReplayCommandOptions& given, std::ostream& out) {
  if (given.topologies.empty()) throw InvalidArgument("replay needs at least one --topology");
  const std::string env_note =
      unapplied_environment_note(given.algorithm, given.protocol, /*replay=*/true);
  if (!env_note.empty()) std::cerr << env_note << "\n";
  ReplayCommandOptions o = given;  // one NCCL name ("Ring", "simple") as twinccl's
  o.algorithm = forced_nccl_name(o.algorithm, "--algo", true);
  o.protocol = forced_nccl_name(o.protocol, "--proto", false);        // "" or LL, LL128, Simple
  if (!o.timeline.empty()) check_output_path("--trace", o.timeline);  // before the replays
  std::vector<LoadedTopology> topologies;
  std::vector<std::string> notes;
  for (const std::string& name : o.topologies) {
    const LoadedTopology& t = topologies.emplace_back(load_edited_topology(name, o.edits));
    for (const std::string& n : t.notes) notes.push_back(t.topology.name() + ": " + n);
  }
  const Replays replays = replay_on_each(o.trace, topologies, o.algorithm, o.protocol);
  const sim::Trace& trace = replays.trace;
  const std::vector<sim::ReplayResult>& results = replays.results;
  out << fmt::format("# trace {} ({}, {} ranks, {} communicators)\n", o.trace,
                     trace.program.empty() ? "unnamed program" : trace.program, trace.world_size(),
                     trace.communicators.size());
  for (const std::string& n : notes) out << "# what-if: " << n << "\n";
  std::vector<std::size_t> order(results.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return results[a].total_us < results[b].total_us;
  });
  const double best = results[order.front()].total_us;
  out << fmt::format("{:<24} {:>14} {:>8} {:>12} {:>12} {:>8}  {}\n", "topology", "time_us",
                     "vs_best", "comm_us", "exposed_us", "overlap", "busiest link (utilisation)");
  for (std::size_t i : order) {
    const sim::ReplayResult& r = results[i];
    double comm = 0.0;
    for (const sim::ReplayRank& rank : r.ranks)
      comm += rank.comm_us / static_cast<double>(r.ranks.size());
    const std::string link = r.links.empty() ? "-"
                                             : fmt::format("{} ({:.0f}%)", r.links.front().name,
                                                           100.0 * r.links.front().utilisation);
    out << fmt::format("{:<24} {:>14.1f} {:>7.2f}x {:>12.1f} {:>12.1f} {:>7.1f}%  {}\n", r.topology,
                       r.total_us, best > 0.0 ? r.total_us / best : 1.0, comm,
                       r.mean_exposed_comm_us(), 100.0 * r.overlap_fraction(), link);
  }
  if (o.links) {
    for (std::size_t i : order) out << "\n" << sim::summarize_replay(results[i], 10);
  }
  if (!o.timeline.empty()) {
    // One file per topology (part_output_paths: the topology's name before the extension,
    // numbered when two names are alike; a device is written in place).
    std::vector<std::string> labels;
    for (const sim::ReplayResult& r : results) labels.push_back(r.topology);
    const std::vector<std::string> paths = part_output_paths(o.timeline, labels);
    for (std::size_t i = 0; i < results.size(); ++i) {
      const sim::ReplayResult& r = results[i];
      const std::string& path = paths[i];
      // Every step checked (a missing folder names the reason; a full disk is an error, not exit
      // 0 with a lost file).
      write_output_file("--trace", path,
                        [&](std::ostream& f) { sim::write_replay_perfetto(r, f); });
      out << "# timeline for " << r.topology << ": " << path
          << " (open at https://ui.perfetto.dev)\n";
    }
  }
  return 0;
}

}  // namespace twinccl::cli
