// `twinccl whatif [COLLECTIVE] -t A -t 'B --set K=V' ... [--replay TRACE] [--plot FILE]`: one
// collective sweep (or one trace) on several topologies or parameter sets, side by side.
//
// How it works. Each --topology value is loaded with its own edits plus the command's
// (topology_flags.h). Sweep: every size of -b/-e/-f is predicted on each topology for all of its
// GPUs (or --ranks) by the one Tuner's rule (sim::predict), rounded to whole elements per rank as
// nccl-tests does; each time is divided by the first topology's at that size. Replay: the trace
// is replayed on each (sim::replay, flow model). Then the table, CSV or JSON, and with --plot a
// gnuplot drawing (whatif_plot.cc).
#include <fmt/format.h>

#include <iostream>
#include <ostream>

#include "commands.h"
#include "flag_values.h"
#include "nccl_list_flags.h"
#include "output_file.h"
#include "perf_measure.h"
#include "perf_options.h"
#include "twinccl/errors.h"
#include "twinccl/sim/held_out_record.h"
#include "twinccl/sim/nccl_env_choice.h"
#include "twinccl/sim/replay.h"
#include "twinccl/sim/selection.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/limits.h"
#include "whatif_report.h"

namespace twinccl::cli {
namespace {

constexpr std::size_t kMaxVariants = 16;

OpKind whatif_collective(const std::string& text) {
  try {
    const OpKind kind = parse_op_kind(text);
    if (!is_p2p(kind) && !is_uneven(kind) && kind != OpKind::barrier) return kind;
  } catch (const InvalidArgument&) {
  }
  throw InvalidArgument("collective '" + shown(text) +
                        "': whatif sweeps one of all_reduce, reduce_scatter, all_gather, "
                        "broadcast, reduce, all_to_all, gather, scatter");
}

std::vector<std::size_t> whatif_sizes(const WhatifOptions& o) {
  PerfOptions p;
  const auto given = [](const std::string& text, const char* fallback) {
    return text.empty() ? std::string(fallback) : text;
  };
  p.min_bytes = parse_bytes_flag("-b", given(o.min_bytes, "1K"));
  p.max_bytes = parse_bytes_flag("-e", given(o.max_bytes, "1G"));
  p.factor = parse_number_flag("-f", given(o.factor, "2"));
  if (!(p.factor > 1.0)) throw InvalidArgument("-f '" + shown(o.factor) + "': must be above 1");
  return sweep_sizes(p);
}

// The analytic model's record on held-out figures of the variant's machine (sim::held_out_note):
// its preset as typed (a label "aws-p5-2 --set nic_gbps=50" is that preset, edited).
std::string held_out_of(const LoadedTopology& t, int ranks) {
  const std::string preset = t.label.substr(0, t.label.find(' '));
  return sim::held_out_note(preset, t.topology, ranks, preset != t.label);
}

WhatifStudy run_sweep(const WhatifOptions& o, const NcclListFlags& lists,
                      const std::vector<LoadedTopology>& topologies) {
  const OpKind kind = whatif_collective(o.collective.empty() ? "all_reduce" : o.collective);
  DataType dtype = DataType::float32;
  try {
    dtype = parse_data_type(o.dtype.empty() ? "float" : o.dtype);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("-d '" + shown(o.dtype) + "': " + e.what());
  }
  const std::vector<std::size_t> sizes = whatif_sizes(o);
  WhatifStudy s;
  s.subject = fmt::format("{} {}", name(kind), name(dtype));
  s.fidelity = o.fidelity.empty() ? "analytic" : o.fidelity;
  s.restriction = lists.note({kind});
  s.nccl_algo = lists.algo;
  s.nccl_proto = lists.proto;
  for (const LoadedTopology& t : topologies) {
    const int gpus = t.topology.gpu_count();
    if (o.ranks > gpus) {
      throw InvalidArgument(fmt::format("--ranks {}: {} has {} GPUs", o.ranks, t.label, gpus));
    }
    const int ranks = o.ranks > 0 ? o.ranks : gpus;
    s.variants.push_back({t.label, t.topology.name(), ranks, t.notes, held_out_of(t, ranks)});
    const std::string replaced =
        sim::nccl_tunes(kind) ? profile_replaced_note(lists, t.topology, t.label) : "";
    if (!replaced.empty()) s.restriction += "; " + replaced;
  }
  for (std::size_t bytes : sizes) {
    WhatifRow row;
    row.bytes = bytes;
    for (std::size_t v = 0; v < topologies.size(); ++v) {
      const int n = s.variants[v].gpus;
      const std::size_t count = count_for(kind, bytes, dtype, n);
      if (count == 0 && bytes > 0) {
        row.cells.emplace_back();
        continue;
      }
      sim::Request r;
      r.spec.kind = kind;
      r.spec.count = count;
      r.spec.nranks = n;
      r.dtype = dtype;
      r.algorithm = o.algorithm;
      if (!o.protocol.empty()) r.protocol = sim::parse_protocol(o.protocol);
      restrict_request(r, lists);  // --algo / --proto in NCCL's syntax
      r.fidelity = sim::parse_fidelity(s.fidelity);
      const sim::Prediction p =
          predicted_under(lists, [&] { return sim::predict(topologies[v].topology, r); });
      WhatifCell c;
      c.bytes = bytes_for(kind, count, dtype, n);
      c.time_us = p.time_us;
      c.algbw_gbps = p.algbw_gbps;
      c.busbw_gbps = p.busbw_gbps;
      // one rank: NCCL runs no algorithm, "one_rank/copy" (sim::Prediction::one_rank)
      c.algorithm = p.one_rank.empty() ? p.algorithm : "one_rank";
      c.protocol = p.one_rank.empty() ? std::string(sim::name(p.protocol)) : p.one_rank;
      row.cells.push_back(c);
    }
    s.rows.push_back(std::move(row));
  }
  return s;
}

WhatifStudy run_replay(const WhatifOptions& o, const std::vector<LoadedTopology>& topologies) {
  if (!o.collective.empty()) {
    throw InvalidArgument("--replay replays a trace; leave out the collective '" +
                          shown(o.collective) + "'");
  }
  if (!o.min_bytes.empty() || !o.max_bytes.empty() || !o.factor.empty() || !o.dtype.empty() ||
      !o.fidelity.empty() || o.ranks > 0) {
    throw InvalidArgument(
        "--replay replays the trace's own sizes and ranks on the flow model; -b, -e, -f, -d, "
        "--ranks and --fidelity are for a sweep");
  }
  const Replays replays = replay_on_each(o.replay, topologies, o.algorithm, o.protocol);
  WhatifStudy s;
  s.replay = true;
  s.subject = o.replay;
  s.fidelity = "flow";
  WhatifRow row;
  for (std::size_t v = 0; v < topologies.size(); ++v) {
    const LoadedTopology& t = topologies[v];
    const sim::ReplayResult& r = replays.results[v];
    s.variants.push_back({t.label, t.topology.name(), replays.trace.world_size(), t.notes,
                          held_out_of(t, replays.trace.world_size())});
    double comm = 0.0;
    for (const sim::ReplayRank& rank : r.ranks) {
      comm += rank.comm_us / static_cast<double>(r.ranks.size());
    }
    WhatifCell c;
    c.time_us = r.total_us;
    c.comm_us = comm;
    c.exposed_us = r.mean_exposed_comm_us();
    c.busiest_link = r.links.empty() ? "-"
                                     : fmt::format("{} ({:.0f}%)", r.links.front().name,
                                                   100.0 * r.links.front().utilisation);
    row.cells.push_back(c);
  }
  s.rows.push_back(std::move(row));
  return s;
}

}  // namespace

CLI::App* add_whatif_command(CLI::App& app, WhatifOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "whatif",
      "one collective sweep (or one trace) on several topologies or parameter sets, side by side");
  cmd->add_option("collective", o.collective, "the collective to sweep (default all_reduce)");
  cmd->add_option("--topology,-t", o.topologies,
                  "preset or file, with its own what-if edits if any: 'dgx-h100 --set "
                  "nvlink_gbps=600' (repeat; the first is the reference)")
      ->required();
  cmd->add_option("-b,--minbytes", o.min_bytes, "smallest size (default 1K)");
  cmd->add_option("-e,--maxbytes", o.max_bytes, "largest size (default 1G)");
  cmd->add_option("-f,--stepfactor", o.factor, "size multiplier between rows (default 2)");
  cmd->add_option("-d,--datatype", o.dtype, "data type (default float)");
  cmd->add_option("--ranks", o.ranks, "ranks on every topology (default: all of its GPUs)")
      ->check(CLI::Range(1, topo::limits::max_gpus));
  cmd->add_option("--fidelity", o.fidelity, "analytic (default) or flow")
      ->check(CLI::IsMember({"analytic", "flow"}));
  cmd->add_option("--algo", o.algorithm,
                  "force an algorithm (default: NCCL's rule), or NCCL_ALGO's syntax "
                  "('^NVLS', 'Ring,Tree') to restrict NCCL's choice");
  cmd->add_option("--proto", o.protocol,
                  "force a protocol: LL, LL128, Simple, or NCCL_PROTO's syntax ('^LL128', "
                  "'simple') to restrict NCCL's choice");
  cmd->add_option("--replay", o.replay, "replay this trace on each topology instead of a sweep");
  cmd->add_option("--format", o.format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  cmd->add_option("--plot", o.plot,
                  "draw busbw against size (a replay: time per topology) with gnuplot into "
                  "FILE.svg or FILE.png");
  add_topology_flags(cmd, o.edits);
  return cmd;
}

int run_whatif_command(const WhatifOptions& given, std::ostream& out) {
  const std::string env_note =
      unapplied_environment_note(given.algorithm, given.protocol, !given.replay.empty());
  if (!env_note.empty()) std::cerr << env_note << "\n";
  WhatifOptions o = given;
  // A sweep: --algo / --proto in NCCL's syntax restrict NCCL's choice; a replay forces one name.
  // Either way o.protocol is then "" or a twinccl name (LL, LL128, Simple).
  NcclListFlags lists;
  if (o.replay.empty()) {
    lists =
        take_nccl_lists(o.algorithm, o.protocol, sim::selectable_algorithms(true),
                        {whatif_collective(o.collective.empty() ? "all_reduce" : o.collective)});
  } else {
    o.algorithm = forced_nccl_name(o.algorithm, "--algo", true);
    o.protocol = forced_nccl_name(o.protocol, "--proto", false);
  }
  if (o.topologies.empty()) throw InvalidArgument("whatif needs at least one --topology");
  if (o.topologies.size() > kMaxVariants) {
    throw InvalidArgument(fmt::format("whatif compares at most {} topologies, got {}", kMaxVariants,
                                      o.topologies.size()));
  }
  if (!o.plot.empty()) {  // before minutes of simulation
    check_whatif_plot_possible(o.plot);
    check_output_path("--plot", o.plot);
  }
  std::vector<LoadedTopology> topologies;
  for (const std::string& spec : o.topologies) {
    topologies.push_back(load_edited_topology(spec, o.edits));
    if (!o.edits.sets.empty() || !o.edits.faults.empty()) {
      topologies.back().label += edits_text(o.edits);
    }
  }
  const WhatifStudy study =
      o.replay.empty() ? run_sweep(o, lists, topologies) : run_replay(o, topologies);
  if (o.format == "json") {
    print_whatif_json(out, study);
  } else if (o.format == "csv") {
    print_whatif_csv(out, study);
  } else {
    print_whatif_table(out, study);
  }
  if (!o.plot.empty()) {
    write_whatif_plot(study, o.plot);
    if (o.format == "table") out << "# plot written to " << o.plot << "\n";
  }
  return 0;
}

}  // namespace twinccl::cli
