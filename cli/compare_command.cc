// `twinccl compare LOG... --topology T [--collective C] [--ranks N --nodes M] [--algo A --proto P]
// [--channels N] [--gpus-per-thread G] [--in-place] [--fidelity analytic|flow]
// [--format table|csv|json]`: reads nccl-tests results measured on a real cluster (stdout logs
// or -J JSON) and sets each row beside the simulator's prediction for the same call on T, with the
// geometric-mean error per size regime. This is how a user checks the model against their own
// cluster before trusting a what-if.
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "compare_report.h"
#include "nccl_debug_files.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/input_file.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/selection.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::cli {

std::vector<sim::NcclTestsTable> read_nccl_tests_logs(const std::vector<std::string>& paths,
                                                      const sim::NcclTestsParseOptions& parse,
                                                      std::size_t* rows_read) {
  std::vector<sim::NcclTestsTable> tables;
  std::size_t own_rows = 0;  // the cap is per file; over all files too, or memory grows with them
  std::size_t& rows = rows_read ? *rows_read : own_rows;
  for (const std::string& path : paths) {
    for (sim::NcclTestsTable& t : sim::parse_nccl_tests_file_text(
             read_input_file("log", path, sim::kNcclTestsMaxBytes), path, parse)) {
      rows += t.rows.size() + t.skipped.size();
      if (rows > sim::kNcclTestsMaxRows) {
        throw ConfigError(
            fmt::format("more than {} result rows over the logs (at {}); give fewer "
                        "logs at once",
                        sim::kNcclTestsMaxRows, shown_value(path, 200)));
      }
      tables.push_back(std::move(t));
    }
  }
  return tables;
}

CLI::App* add_compare_command(CLI::App& app, CompareOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "set measured nccl-tests results (stdout logs or -J JSON) beside the simulator's prediction");
  cmd->add_option("logs", o.logs, "nccl-tests output files (stdout table or -J JSON)")->required();
  cmd->add_option("--topology,-t", o.topology,
                  "preset name or topology file the logs were measured on")
      ->required();
  cmd->add_option("--collective", o.collective,
                  "the collective, when the log does not name it (all_reduce, ...)");
  cmd->add_option("--ranks", o.ranks,
                  "ranks of the run, when the log's device block is missing or truncated")
      ->check(CLI::Range(1, sim::kNcclTestsMaxRanks));
  cmd->add_option("--nodes", o.nodes,
                  "nodes of the run, when the log's device block is missing or truncated")
      ->check(CLI::Range(1, sim::kNcclTestsMaxRanks));
  cmd->add_option("--algo", o.algorithm,
                  "the run's NCCL_ALGO in NCCL's syntax ('Ring,Tree', '^NVLS'), or one twinccl "
                  "algorithm to force (default: the NCCL_ALGO the log prints, else NCCL's choice)");
  cmd->add_option("--proto", o.protocol,
                  "the run's NCCL_PROTO in NCCL's syntax ('^LL128', 'simple'), or LL, LL128, "
                  "Simple to force (default: the NCCL_PROTO the log prints, else NCCL's choice)");
  cmd->add_option(
         "--channels", o.channels,
         "channels the run used (its NCCL_MIN_NCHANNELS / NCCL_MIN_CTAS; default: NCCL's choice)")
      ->check(CLI::Range(1, sim::kMaxRequestChannels));
  cmd->add_option(
         "--gpus-per-thread,-g", o.gpus_per_thread,
         "nccl-tests -g of the run: GPUs one thread launched (default: the log's nGpus, else 1)")
      ->check(CLI::Range(1, sim::kNcclTestsMaxGpusPerThread));
  cmd->add_flag("--in-place", o.in_place, "compare the in-place columns (default: out-of-place)");
  cmd->add_option("--fidelity", o.fidelity, "analytic (default) or flow")
      ->check(CLI::IsMember({"analytic", "flow"}));
  cmd->add_option("--format", o.format, "table, csv or json")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  add_nccl_debug_option(cmd, o.nccl_debug);
  add_topology_flags(cmd, o.edits);
  return cmd;
}

int run_compare_command(const CompareOptions& options, std::ostream& out) {
  if (options.logs.empty()) throw InvalidArgument("compare needs at least one nccl-tests log");
  CompareOptions o = options;
  const LoadedTopology loaded = load_edited_topology(o.topology, o.edits);
  const topo::Topology& topology = loaded.topology;
  sim::NcclTestsParseOptions parse;
  parse.collective = o.collective;
  parse.ranks = o.ranks;
  parse.nodes = o.nodes;
  std::vector<sim::NcclTestsTable> tables = read_nccl_tests_logs(o.logs, parse);
  apply_nccl_debug_files(tables, o.nccl_debug);
  // --algo / --proto in NCCL's syntax (nccl_list_flags.h), refused for the logs' collectives
  // before any row is predicted, with perf's words.
  std::vector<OpKind> collectives;
  for (const sim::NcclTestsTable& t : tables) {
    if (t.kind) collectives.push_back(*t.kind);
  }
  // What take_nccl_lists leaves in o.protocol is "" or a twinccl name (LL, LL128, Simple).
  o.nccl_lists =
      take_nccl_lists(o.algorithm, o.protocol, sim::selectable_algorithms(true), collectives);
  const CompareReport report = build_compare_report(std::move(tables), topology, o);
  print_compare_warnings(std::cerr, report);
  if (o.format == "json") {
    print_compare_json(out, report);
  } else if (o.format == "csv") {
    print_compare_csv(out, report);
  } else {
    for (const std::string& n : loaded.notes) out << "# what-if: " << n << "\n";
    print_compare_table(out, report);
  }
  return 0;
}

}  // namespace twinccl::cli
