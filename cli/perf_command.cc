// `twinccl perf`: nccl-tests' flags, the backend choice and the output format.
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "perf_measure.h"
#include "perf_predict.h"
#include "twinccl/algorithms.h"
#include "twinccl/errors.h"

namespace twinccl::cli {
namespace {

struct RawPerf {
  std::vector<std::string> collectives;
  std::string min_bytes = "8", max_bytes, step_bytes, dtype = "float", op = "sum", check_max = "256M";
  double factor = 0;
  int check = 1;
};

RawPerf raw;  // filled by CLI11 during parse; read once by run_perf_command

std::vector<DataType> parse_dtypes(const std::string& text) {
  if (text == "all") return {kAllDataTypes.begin(), kAllDataTypes.end()};
  return {parse_data_type(text)};
}

std::vector<ReduceKind> parse_ops(const std::string& text) {
  if (text == "all") {
    return {ReduceKind::sum, ReduceKind::prod, ReduceKind::min, ReduceKind::max, ReduceKind::avg,
            ReduceKind::premul_sum};
  }
  return {parse_reduce_kind(text)};
}

}  // namespace

CLI::App* add_perf_command(CLI::App& app, PerfOptions& o) {
  CLI::App* cmd = app.add_subcommand("perf", "nccl-tests-style sweep: measured (emu, nccl) or predicted (sim)");
  cmd->add_option("collective", raw.collectives, "all_reduce reduce_scatter all_gather broadcast reduce all_to_all "
                                                 "gather scatter (default: all_reduce reduce_scatter all_gather)");
  cmd->add_option("-b,--minbytes", raw.min_bytes, "smallest size (K/M/G suffixes)");
  cmd->add_option("-e,--maxbytes", raw.max_bytes, "largest size (default 16M emu, 8G sim)");
  cmd->add_option("-f,--stepfactor", raw.factor, "multiply the size by this factor (default 4 emu, 2 sim)");
  cmd->add_option("-i,--stepbytes", raw.step_bytes, "add this many bytes instead of multiplying");
  cmd->add_option("-n,--iters", o.iterations, "timed iterations per size")->check(CLI::Range(1, 1000000));
  cmd->add_option("-w,--warmup_iters", o.warmup, "warmup iterations")->check(CLI::Range(0, 1000000));
  cmd->add_option("-c,--check", raw.check, "check results on the emulator (#wrong): 1 (default) or 0")
      ->expected(0, 1)
      ->default_str("1")
      ->check(CLI::Range(0, 1));
  cmd->add_option("--check-max", raw.check_max, "sim: check rows on the emulator while all buffers fit in this");
  cmd->add_option("-d,--datatype", raw.dtype, "float, half, bfloat16, int32, ... or all");
  cmd->add_option("-o,--op", raw.op, "sum, prod, min, max, avg, premul_sum or all");
  cmd->add_option("-r,--root", o.root, "root rank of rooted collectives");
  cmd->add_option("--backend", o.backend, "sim (predict on --topology, default dgx-h100), emu (measure emulated "
                                          "ranks), nccl (measure GPUs)")
      ->check(CLI::IsMember({"emu", "sim", "nccl"}));
  cmd->add_option("--ranks", o.ranks, "emulated ranks (emu) / world size")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--topology", o.topology, "preset or file for predictions (see `twinccl topo list`)");
  cmd->add_option("--algo", o.algorithm, "force an algorithm (`--algo help` lists them)")->envname("TWINCCL_ALGO");
  cmd->add_option("--proto", o.protocol, "force a protocol: LL, LL128, Simple (sim)")->envname("TWINCCL_PROTO");
  cmd->add_option("--fidelity", o.fidelity, "sim timing: analytic or flow")
      ->check(CLI::IsMember({"analytic", "flow"}));
  cmd->add_option("--format", o.format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_option("--trace", o.trace_file, "write a Perfetto/Chrome trace of the transfers at the largest size");
  cmd->add_flag("--links", o.links, "list the busiest links (sim)");
  cmd->add_flag("--compare", o.compare, "sim: predicted time of every applicable algorithm/protocol, winner marked");
  return cmd;
}

int run_perf_command(PerfOptions o, std::ostream& out) {
  for (const auto& c : raw.collectives) o.collectives.push_back(parse_op_kind(c));
  if (o.collectives.empty()) o.collectives = {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather};
  for (OpKind k : o.collectives) {
    if (is_p2p(k) || is_uneven(k) || k == OpKind::barrier) {
      throw InvalidArgument("perf sweeps the even collectives; '" + std::string(name(k)) + "' is not one of them");
    }
  }
  if (o.algorithm == "help") {
    print_algorithms(out, o.collectives);
    return 0;
  }
  bool sim = o.backend == "sim";
  o.min_bytes = parse_bytes(raw.min_bytes);
  o.max_bytes = raw.max_bytes.empty() ? (sim ? std::size_t{8} << 30 : std::size_t{16} << 20) : parse_bytes(raw.max_bytes);
  o.factor = raw.factor > 0 ? raw.factor : (sim ? 2.0 : 4.0);
  o.step_bytes = raw.step_bytes.empty() ? 0 : parse_bytes(raw.step_bytes);
  o.check = raw.check == 1;
  o.check_max_bytes = parse_bytes(raw.check_max);
  o.dtypes = parse_dtypes(raw.dtype);
  o.ops = parse_ops(raw.op);
  if (o.root < 0) throw InvalidArgument("-r " + std::to_string(o.root) + ": the root must be >= 0");
  if (!o.algorithm.empty() && !sim) {  // the simulator checks its own names (it also knows nvls_tree)
    for (OpKind k : o.collectives) find_algorithm(k, o.algorithm);  // throws listing what exists
  }
  PerfReport report = sim ? run_predicted_perf(o) : run_measured_perf(o);
  if (!sim && !o.topology.empty()) add_predictions(report, o);
  if (report.rows.empty()) {
    throw InvalidArgument("no size in [" + std::to_string(o.min_bytes) + ", " + std::to_string(o.max_bytes) +
                          "] bytes can be split into at least one element per rank for these collectives");
  }
  report.header_lines.push_back("sizes are rounded down to whole elements per rank and sizes below one element per "
                                "rank are skipped, as nccl-tests does");
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
