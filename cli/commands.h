// The subcommands of `twinccl`: each adds its options to the CLI11 app and runs from a plain
// options struct (so tests can call run_* directly).
#pragma once

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <string>
#include <vector>

#include "compare_options.h"
#include "perf_options.h"
#include "topology_flags.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/replay.h"
#include "xml_hint_flags.h"

namespace twinccl::cli {

// The whole program: parses argv, runs the subcommand, writes to std::cout and std::cerr and
// returns the exit code (0 success, 1 a failure while running, 2 a usage or configuration error).
int run_main(int argc, char** argv);

CLI::App* add_perf_command(CLI::App& app, PerfOptions& options);
int run_perf_command(PerfOptions options, std::ostream& out);

struct TopoOptions {
  std::string action;   // list | show | check
  std::string target;   // preset name or file
  XmlHintFlags xml;     // --gpu, --nvlink, --nic-gbps, --gpu-count, --nic-count, --nodes
  TopologyFlags edits;  // --set, --degrade, --fail
  std::string format;   // show: "" or "text" (the description), "json" (a topology file)
  std::string output;   // show --format json: the file to write ("" = standard output)
};
CLI::App* add_topo_command(CLI::App& app, TopoOptions& options);
int run_topo_command(const TopoOptions& options, std::ostream& out);

struct AlgoOptions {
  std::string collective;  // empty: every collective
};
CLI::App* add_algo_command(CLI::App& app, AlgoOptions& options);
int run_algo_command(const AlgoOptions& options, std::ostream& out);
// One line per algorithm of each collective, the default marked.
void print_algorithms(std::ostream& out, const std::vector<OpKind>& kinds);

struct ReplayCommandOptions {
  std::string trace;                    // trace file (sim/include/twinccl/sim/replay_trace.h)
  std::vector<std::string> topologies;  // presets or files ("NAME --set ..."), one replay each
  TopologyFlags edits;                  // --set, --degrade, --fail: applied to every topology
  std::string timeline;                 // --trace: Perfetto output
  bool links = false;
  std::string algorithm, protocol;
};
CLI::App* add_replay_command(CLI::App& app, ReplayCommandOptions& options);
int run_replay_command(const ReplayCommandOptions& options, std::ostream& out);
// The trace at `trace_path` replayed on each topology (the GPUs a --degrade slowed compute slower),
// --algo/--proto forced where given ("" = the tuner's): replay's and whatif --replay's one way. A
// trace whose ranks wait for each other is bad input: ConfigError, found on loading or replaying.
struct Replays {
  sim::Trace trace;
  std::vector<sim::ReplayResult> results;  // one per topology, in order
};
Replays replay_on_each(const std::string& trace_path, const std::vector<LoadedTopology>& topologies,
                       const std::string& algorithm, const std::string& protocol);

// `twinccl compare LOG... --topology T`: measured nccl-tests rows beside the prediction
// (compare_options.h).
CLI::App* add_compare_command(CLI::App& app, CompareOptions& options);
int run_compare_command(const CompareOptions& options, std::ostream& out);
// The tables of nccl-tests logs (compare_command.cc; calibrate's too): ConfigError when a file is
// missing, not a regular file or larger than a log can be, or when the rows of all logs read
// (counted in *rows_read across calls when given) pass sim::kNcclTestsMaxRows.
std::vector<sim::NcclTestsTable> read_nccl_tests_logs(const std::vector<std::string>& paths,
                                                      const sim::NcclTestsParseOptions& parse,
                                                      std::size_t* rows_read = nullptr);

// `twinccl calibrate LOG... --topology T -o FILE` (calibrate_command.cc).
struct CalibrateOptions {
  std::vector<std::string> logs;
  std::string topology;
  std::string output;
  std::string collective;
  bool bandwidth_only = false;  // fit the rates alone (logs without rows below 1 MiB)
  bool scale_trend = false;     // carry the error's trend with the node count to the topology's
  // Per log, in the order of `logs`, where its device block is missing or truncated (0 = the
  // log's own); empty = every log's own.
  std::vector<int> ranks, nodes;
  // Per log, in the order of `logs` (one --algo / --proto each, NCCL's own syntax: "Ring",
  // "NVLS,NVLSTree"; "-" = what the log says): the run's NCCL_ALGO / NCCL_PROTO.
  std::vector<std::string> algorithms, protocols;
  std::vector<std::string> nccl_debug;  // --nccl-debug: NCCL's debug files (nccl_debug_files.h)
};
CLI::App* add_calibrate_command(CLI::App& app, CalibrateOptions& options);
int run_calibrate_command(const CalibrateOptions& options, std::ostream& out);

// `twinccl whatif`: one sweep (or trace) on several topologies, side by side (whatif_command.cc).
struct WhatifOptions {
  std::string collective;               // "" = all_reduce (sweep) / none (--replay)
  std::vector<std::string> topologies;  // "NAME [--set K=V --degrade P=R --fail P]"
  TopologyFlags edits;                  // applied to every topology
  // Sweep only; "" = the default (1K, 1G, 2, float, analytic).
  std::string min_bytes, max_bytes, factor, dtype, fidelity;
  int ranks = 0;  // 0 = every GPU of each topology
  std::string algorithm, protocol;
  std::string replay;  // a trace file: replay it instead of a sweep
  std::string format = "table";
  std::string plot;  // .svg or .png, drawn by gnuplot
};
CLI::App* add_whatif_command(CLI::App& app, WhatifOptions& options);
int run_whatif_command(const WhatifOptions& options, std::ostream& out);

// `twinccl import-torch-trace RANK0.json[.gz] ... -o job.trace.json`: PyTorch profiler traces of
// a real job as a twinccl-trace for `replay` (import_torch_command.cc).
struct ImportTorchOptions {
  std::vector<std::string> profiles;     // one per rank, any order
  std::string output;                    // -o
  std::string program;                   // free text; "" = the files' names
  bool replicate_missing_ranks = false;  // build ranks without a file from the lowest given
};
CLI::App* add_import_torch_command(CLI::App& app, ImportTorchOptions& options);
int run_import_torch_command(const ImportTorchOptions& options, std::ostream& out);

}  // namespace twinccl::cli
