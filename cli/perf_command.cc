// `twinccl perf`: nccl-tests' flags, the backend choice and the output format.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "flag_values.h"
#include "output_file.h"
#include "perf_flags.h"
#include "perf_measure.h"
#include "perf_p2p.h"
#include "perf_predict.h"
#include "twinccl/algorithms.h"
#include "twinccl/ascii_case.h"
#include "twinccl/errors.h"
#include "twinccl/run.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/selection.h"

namespace twinccl::cli {
namespace {

RawPerfFlags raw;  // filled by CLI11 during parse; read once by run_perf_command

// --algo / TWINCCL_ALGO: a name in the registry (the simulator also knows nvls_tree); whether it
// applies to each collective is checked by the emulator or the simulator after this.
void check_algorithm_name(const std::string& algorithm, bool sim) {
  if (algorithm.empty()) return;
  const std::vector<std::string> names = sim::selectable_algorithms(sim);
  std::string list;
  for (const std::string& n : names) {
    if (n == algorithm) return;
    list += (list.empty() ? "" : ", ") + n;
  }
  throw InvalidArgument("--algo (or TWINCCL_ALGO) '" + shown(algorithm) +
                        "': unknown algorithm; valid: " + list +
                        " (`twinccl algo` says which collectives have which)" +
                        (sim ? std::string()
                             : "; NCCL_ALGO's syntax ('^NVLS', 'Ring,Tree') restricts the "
                               "simulator's choice: --backend sim"));
}

// What nccl-tests prints about the run: -t/-g as given (else one thread driving every rank).
void fill_config(RunConfig& c, const PerfOptions& o, bool world_from_ranks) {
  c.nthreads = world_from_ranks ? 1 : std::max(o.nthreads, 1);
  c.ngpus = world_from_ranks ? o.ranks : std::max(o.ngpus, 1);
  c.min_bytes = o.min_bytes;
  c.max_bytes = o.max_bytes;
  c.factor = o.step_bytes > 0 ? 1 : o.factor;
  c.step_bytes = o.step_bytes;
  c.warmup = o.warmup;
  c.iterations = o.iterations;
  c.agg_iters = o.agg_iters;
  c.validation = o.check_count;
  c.graph = o.graph;
  c.blocking = o.blocking;
  c.unalign = o.unalign;
  c.cputime = o.report_cputime;
  c.timestamps = o.report_timestamps;
  c.plain = o.plain;
  c.pid = static_cast<int>(getpid());
  if (!o.ignored.empty()) {
    std::string list;
    for (const std::string& f : o.ignored) list += (list.empty() ? "" : ", ") + f;
    // On NCCL some of them (-G, -R, -y, ...) have a meaning TwinCCL does not implement yet.
    c.notes.push_back(o.backend == "nccl"
                          ? "ignored here (not implemented for the NCCL backend): " + list
                          : "ignored here (no meaning on an emulator or simulator): " + list);
  }
  if (o.backend == "sim" && o.average != 1)
    c.notes.push_back("-a " + std::to_string(o.average) +
                      ": every rank has "
                      "the same predicted time");
}

// -J FILE, as nccl-tests' jsonOutputInit: only a name ending in .json (any case) is written; the
// file is created new, never overwritten: when FILE exists the first free of FILE.0, FILE.1, ...
// is taken. One file per collective (nccl-tests runs one per program), so a default sweep of
// three collectives into an empty folder writes FILE, FILE.0 and FILE.1. A device or pipe
// ("out.json" linked to /dev/null) is written in place, never a new file beside it.
std::string free_json_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status s = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(s)) return path;
  if (!std::filesystem::is_regular_file(s) && !std::filesystem::is_directory(s)) return path;
  for (int i = 0; i < 100000; ++i) {
    std::string candidate = path + "." + std::to_string(i);
    if (!std::filesystem::exists(candidate)) return candidate;
  }
  throw ConfigError("-J '" + shown(path) + "': " + path + " and " + path + ".0 .. " + path +
                    ".99999 all exist; remove some or pick another name");
}

// nccl-tests writes -J FILE only when FILE ends in .json (any case).
bool json_name(const std::string& file) {
  return file.size() >= 5 && lowercase_ascii(file.substr(file.size() - 5)) == ".json";
}

void write_json_files(const PerfReport& report, const PerfOptions& o, std::ostream& out) {
  const std::string& file = o.json_file;
  if (!json_name(file)) {
    if (o.format == "table")
      out << "# -J " << shown(file) << ": not a .json name, no file written (as nccl-tests)\n";
    return;
  }
  for (OpKind kind : o.collectives) {
    const std::string path = free_json_path(file);
    write_output_file("-J", path,
                      [&](std::ostream& f) { write_nccl_tests_json(f, report, kind, o.argv); });
    if (o.format == "table") out << "# Writing JSON output to " << path << "\n";
  }
}

}  // namespace

CLI::App* add_perf_command(CLI::App& app, PerfOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("perf", "nccl-tests-style sweep: measured (emu, nccl) or predicted (sim)");
  cmd->add_option(
      "collective", raw.collectives,
      "all_reduce reduce_scatter all_gather broadcast reduce all_to_all "
      "gather scatter sendrecv hypercube (default: all_reduce reduce_scatter all_gather)");
  add_nccl_tests_flags(cmd, raw);
  auto last = [](CLI::Option* opt) {
    return opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  };
  last(cmd->add_option("--backend", o.backend,
                       "sim (predict on --topology, default dgx-h100), emu (measure emulated "
                       "ranks), nccl (measure GPUs)")
           ->check(CLI::IsMember({"emu", "sim", "nccl"})));
  last(cmd->add_option("--topology", o.topology,
                       "preset or file for predictions (see `twinccl topo list`)"));
  add_xml_hint_flags(cmd, o.xml);
  add_topology_flags(cmd, o.edits);
  last(cmd->add_option("--algo", o.algorithm,
                       "force an algorithm (`--algo help` lists them); sim: or NCCL_ALGO's "
                       "syntax ('^NVLS', 'Ring,Tree') to restrict NCCL's choice")
           ->envname("TWINCCL_ALGO"));
  last(cmd->add_option("--proto", o.protocol,
                       "force a protocol: LL, LL128, Simple; sim: or NCCL_PROTO's syntax "
                       "('^LL128', 'simple') to restrict NCCL's choice")
           ->envname("TWINCCL_PROTO"));
  last(cmd->add_option("--fidelity", o.fidelity, "sim timing: analytic or flow")
           ->check(CLI::IsMember({"analytic", "flow"})));
  last(cmd->add_option("--nccl-version", o.nccl_version,
                       "sim: rank algorithms as this NCCL's tuning model (X.Y.Z, 2.9.0 on; "
                       "default the newest)")
           ->check([](const std::string& v) {
             return sim::nccl_version_code(v) != 0
                        ? std::string()
                        : "--nccl-version " + v + ": not an NCCL version X.Y.Z from 2.9.0";
           }));
  last(cmd->add_option("--format", o.format, "table, json or csv")
           ->check(CLI::IsMember({"table", "json", "csv"})));
  last(cmd->add_option("--trace", o.trace_file,
                       "write a Perfetto/Chrome trace of the transfers at the largest size"));
  cmd->add_flag("--links", o.links, "list the busiest links (sim)");
  cmd->add_flag(
      "--compare", o.compare,
      "sim: predicted time of every applicable algorithm/protocol, fastest first, NCCL's choice *");
  cmd->add_flag("--plain", o.plain,
                "only nccl-tests' 13 columns (no algorithm/protocol or prediction columns)");
  return cmd;
}

int run_perf_command(PerfOptions o, std::ostream& out) {
  for (std::string c : raw.collectives) {
    if (c.size() > 5 && c.compare(c.size() - 5, 5, "_perf") == 0)
      c.resize(c.size() - 5);                   // all_reduce_perf
    if (c == "sendrecv" || c == "hypercube") {  // grouped send/recv programs (perf_p2p.h)
      o.collectives.push_back(c == "sendrecv" ? kSendRecvTest : kHypercubeTest);
      continue;
    }
    try {
      o.collectives.push_back(parse_op_kind(c));
    } catch (const InvalidArgument&) {
      throw InvalidArgument("collective '" + shown(c) +
                            "' is not one: use all_reduce, reduce_scatter, all_gather, broadcast, "
                            "reduce, all_to_all, "
                            "gather, scatter, sendrecv or hypercube");
    }
  }
  if (o.collectives.empty())
    o.collectives = {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather};
  for (OpKind k : o.collectives) {
    if (is_p2p_test(k)) {
      if (!o.algorithm.empty() && o.algorithm != "help") {
        throw InvalidArgument(
            "--algo (or TWINCCL_ALGO) '" + shown(o.algorithm) +
            "': " + std::string(perf_test_name(k)) +
            " is grouped send/recv, with no algorithm to choose; drop --algo for it");
      }
      continue;
    }
    if (is_p2p(k) || is_uneven(k) || k == OpKind::barrier) {
      throw InvalidArgument("perf sweeps the even collectives; '" + std::string(name(k)) +
                            "' is not one of them");
    }
  }
  if (o.algorithm == "help") {
    std::vector<OpKind> collectives;
    for (OpKind k : o.collectives) {
      if (!is_p2p_test(k)) collectives.push_back(k);
    }
    print_algorithms(out, collectives);
    return 0;
  }
  bool sim = o.backend == "sim";
  apply_nccl_tests_flags(raw, o);
  // On GPUs the launcher decides the world: --ranks (or -t x -g) is then only checked against it.
  if (o.backend == "nccl" && raw.ranks.empty() && raw.nthreads.empty() && raw.ngpus.empty())
    o.ranks = launched_world_size(o.backend);
  if (o.root >= o.ranks && !sim) {
    throw InvalidArgument("-r " + raw.root + ": the root must be a rank in [0, " +
                          std::to_string(o.ranks - 1) + "] (" + std::to_string(o.ranks) +
                          " ranks)");
  }
  (void)sweep_sizes(o);  // refuses bad or oversized sweeps before anything runs
  if (sim) {  // NCCL_ALGO / NCCL_PROTO syntax restricts the prediction (nccl_list_flags.h)
    const std::string note = unapplied_environment_note(o.algorithm, o.protocol);
    if (!note.empty()) std::cerr << note << "\n";
    o.nccl_lists =
        take_nccl_lists(o.algorithm, o.protocol, sim::selectable_algorithms(true), o.collectives,
                        "--algo (or TWINCCL_ALGO)", "--proto (or TWINCCL_PROTO)");
  }
  // On the simulator take_nccl_lists left "" or a twinccl name; elsewhere --proto forces one.
  if (!sim && !o.protocol.empty()) {
    try {
      check_protocol_flag("--proto (or TWINCCL_PROTO)", o.protocol);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string(e.what()) +
                            "; NCCL_PROTO's syntax ('^LL128', 'LL,Simple') restricts the "
                            "simulator's choice: --backend sim");
    }
  }
  check_algorithm_name(o.algorithm, sim);
  if (!o.algorithm.empty() && !sim) {  // the simulator checks where its names apply itself
    for (OpKind k : o.collectives) {
      try {
        if (is_p2p_test(k)) continue;
        find_algorithm(k, o.algorithm);
      } catch (const InvalidArgument& e) {
        throw InvalidArgument(std::string("--algo (or TWINCCL_ALGO): ") + e.what());
      }
    }
  }
  if (!sim && (o.links || o.compare || !o.trace_file.empty())) {  // were ignored without a word
    throw InvalidArgument(std::string(!o.trace_file.empty() ? "--trace"
                                      : o.links             ? "--links"
                                                            : "--compare") +
                          " is about the simulator's prediction: give --backend sim (--backend " +
                          o.backend + " measures; it draws no trace, links or comparison)");
  }
  if (!sim && o.topology.empty() && !to_edits(o.edits).empty()) {
    throw InvalidArgument(
        "--set/--degrade/--fail change the topology of a prediction: give "
        "--topology (or --backend sim)");
  }
  // Output files that cannot be written end the command before the sweep, not after it.
  if (!o.trace_file.empty()) check_output_path("--trace", o.trace_file);
  if (json_name(o.json_file)) check_output_path("-J", free_json_path(o.json_file));
  load_perf_selection(o);  // the topology, once: every row's choice and prediction ask it
  PerfReport report = sim ? run_predicted_perf(o) : run_measured_perf(o);
  if (!sim && !o.topology.empty()) add_predictions(report, o);
  if (report.rows.empty()) {
    throw InvalidArgument(
        "no size in [" + std::to_string(o.min_bytes) + ", " + std::to_string(o.max_bytes) +
        "] bytes can be split into at least one element per rank for these collectives");
  }
  report.header_lines.push_back(
      "sizes are rounded down to whole elements per rank (16-byte blocks per rank for the "
      "gathered collectives, as nccl-tests rounds them); sizes that round to 0 are skipped");
  if (sim && o.ranks == 0)
    o.ranks = static_cast<int>(report.config.devices.size());  // every GPU of the topology
  fill_config(report.config, o, raw.ngpus.empty() && raw.nthreads.empty());
  report.nranks = o.ranks;
  if (!o.json_file.empty()) write_json_files(report, o, out);
  if (o.format == "json") {
    print_json(out, report);
  } else if (o.format == "csv") {
    print_csv(out, report);
  } else {
    print_table(out, report);
  }
  return 0;
}

}  // namespace twinccl::cli
