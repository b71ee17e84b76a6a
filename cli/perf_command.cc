// `twinccl perf`: nccl-tests' flags, the backend choice and the output format.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "commands.h"
#include "flag_values.h"
#include "perf_measure.h"
#include "perf_predict.h"
#include "twinccl/algorithms.h"
#include "twinccl/errors.h"
#include "twinccl/run.h"

namespace twinccl::cli {
namespace {

// Every value as typed, parsed strictly in run_perf_command (CLI11's own integer parsing takes
// "0x10", " 8" and octal "010"); empty means the flag was not given (main refuses empty values).
struct RawPerf {
  std::vector<std::string> collectives;
  std::string min_bytes, max_bytes, step_bytes, factor, iterations, warmup, check, check_max, root, ranks;
  std::string dtype = "float", op = "sum";
};

RawPerf raw;  // filled by CLI11 during parse; read once by run_perf_command

const std::vector<ReduceKind> kAllReduceKinds{ReduceKind::sum, ReduceKind::prod, ReduceKind::min,
                                              ReduceKind::max, ReduceKind::avg,  ReduceKind::premul_sum};

std::vector<DataType> parse_dtypes(const std::string& text) {
  if (text == "all") return {kAllDataTypes.begin(), kAllDataTypes.end()};
  try {
    return {parse_data_type(text)};
  } catch (const InvalidArgument&) {
    std::string names;
    for (DataType t : kAllDataTypes) names += std::string(names.empty() ? "" : ", ") + std::string(name(t));
    throw InvalidArgument("-d '" + shown(text) + "': unknown data type; valid: " + names + ", all");
  }
}

std::vector<ReduceKind> parse_ops(const std::string& text) {
  if (text == "all") return kAllReduceKinds;
  try {
    return {parse_reduce_kind(text)};
  } catch (const InvalidArgument&) {
    std::string names;
    for (ReduceKind k : kAllReduceKinds) names += std::string(names.empty() ? "" : ", ") + std::string(name(k));
    throw InvalidArgument("-o '" + shown(text) + "': unknown reduction; valid: " + names + ", all");
  }
}

int int_or(const std::string& text, std::string_view flag, int fallback, int min, int max) {
  return text.empty() ? fallback : static_cast<int>(parse_int_flag(flag, text, min, max));
}

// --proto / TWINCCL_PROTO: the names the simulator knows, spelled as NCCL spells them.
void check_protocol(const std::string& protocol) {
  if (protocol.empty()) return;
  for (const char* p : {"LL", "LL128", "Simple"}) {
    if (protocol == p) return;
  }
  throw InvalidArgument("--proto (or TWINCCL_PROTO) '" + shown(protocol) + "': unknown protocol; valid: LL, LL128, Simple");
}

// --algo / TWINCCL_ALGO: a name in the registry (the simulator also knows nvls_tree); whether it
// applies to each collective is checked by the emulator or the simulator after this.
void check_algorithm_name(const std::string& algorithm, bool sim) {
  if (algorithm.empty()) return;
  std::vector<std::string> names;
  for (const Algorithm* a : all_algorithms()) {
    std::string n(a->name());
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  if (sim) names.emplace_back("nvls_tree");
  std::string list;
  for (const std::string& n : names) {
    if (n == algorithm) return;
    list += (list.empty() ? "" : ", ") + n;
  }
  throw InvalidArgument("--algo (or TWINCCL_ALGO) '" + shown(algorithm) + "': unknown algorithm; valid: " + list +
                        " (`twinccl algo` says which collectives have which)");
}

}  // namespace

CLI::App* add_perf_command(CLI::App& app, PerfOptions& o) {
  CLI::App* cmd = app.add_subcommand("perf", "nccl-tests-style sweep: measured (emu, nccl) or predicted (sim)");
  cmd->add_option("collective", raw.collectives, "all_reduce reduce_scatter all_gather broadcast reduce all_to_all "
                                                 "gather scatter (default: all_reduce reduce_scatter all_gather)");
  // nccl-tests: a flag given twice takes the last value.
  auto last = [](CLI::Option* opt) { return opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast); };
  last(cmd->add_option("-b,--minbytes", raw.min_bytes, "smallest size (K/M/G/T suffixes, powers of 1024; default 8)"));
  last(cmd->add_option("-e,--maxbytes", raw.max_bytes, "largest size (default 16M emu, 8G sim; at most 1P)"));
  last(cmd->add_option("-f,--stepfactor", raw.factor, "multiply the size by this factor > 1 (default 4 emu, 2 sim)"));
  last(cmd->add_option("-i,--stepbytes", raw.step_bytes, "add this many bytes instead of multiplying"));
  last(cmd->add_option("-n,--iters", raw.iterations, "timed iterations per size, 1..1000000 (default 5)"));
  last(cmd->add_option("-w,--warmup_iters", raw.warmup, "warmup iterations, 0..1000000 (default 1)"));
  last(cmd->add_option("-c,--check", raw.check, "check results on the emulator (#wrong): 1 (default) or 0")
           ->expected(0, 1));
  last(cmd->add_option("--check-max", raw.check_max, "sim: check rows on the emulator while all buffers fit in this "
                                                     "(default 256M)"));
  last(cmd->add_option("-d,--datatype", raw.dtype, "float, half, bfloat16, int32, ... or all"));
  last(cmd->add_option("-o,--op", raw.op, "sum, prod, min, max, avg, premul_sum or all"));
  last(cmd->add_option("-r,--root", raw.root, "root rank of rooted collectives (default 0)"));
  last(cmd->add_option("--backend", o.backend, "sim (predict on --topology, default dgx-h100), emu (measure emulated "
                                               "ranks), nccl (measure GPUs)")
           ->check(CLI::IsMember({"emu", "sim", "nccl"})));
  last(cmd->add_option("--ranks", raw.ranks,
                       "emulated ranks (threads), 1.." + std::to_string(kMaxEmulatedRanks) + " (default 8)"));
  last(cmd->add_option("--topology", o.topology, "preset or file for predictions (see `twinccl topo list`)"));
  last(cmd->add_option("--algo", o.algorithm, "force an algorithm (`--algo help` lists them)")->envname("TWINCCL_ALGO"));
  last(cmd->add_option("--proto", o.protocol, "force a protocol: LL, LL128, Simple (sim)")->envname("TWINCCL_PROTO"));
  last(cmd->add_option("--fidelity", o.fidelity, "sim timing: analytic or flow")
           ->check(CLI::IsMember({"analytic", "flow"})));
  last(cmd->add_option("--format", o.format, "table, json or csv")->check(CLI::IsMember({"table", "json", "csv"})));
  last(cmd->add_option("--trace", o.trace_file, "write a Perfetto/Chrome trace of the transfers at the largest size"));
  cmd->add_flag("--links", o.links, "list the busiest links (sim)");
  cmd->add_flag("--compare", o.compare, "sim: predicted time of every applicable algorithm/protocol, winner marked");
  return cmd;
}

int run_perf_command(PerfOptions o, std::ostream& out) {
  for (const auto& c : raw.collectives) {
    try {
      o.collectives.push_back(parse_op_kind(c));
    } catch (const InvalidArgument&) {
      throw InvalidArgument("collective '" + shown(c) +
                            "' is not one: use all_reduce, reduce_scatter, all_gather, broadcast, reduce, all_to_all, "
                            "gather or scatter");
    }
  }
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
  o.min_bytes = raw.min_bytes.empty() ? 8 : parse_bytes_flag("-b", raw.min_bytes);
  o.max_bytes = raw.max_bytes.empty() ? (sim ? std::size_t{8} << 30 : std::size_t{16} << 20)
                                      : parse_bytes_flag("-e", raw.max_bytes);
  if (!raw.factor.empty() && !raw.step_bytes.empty()) {
    throw InvalidArgument("-f " + shown(raw.factor) + " and -i " + shown(raw.step_bytes) +
                          " both given: a sweep either multiplies (-f) or adds (-i)");
  }
  o.factor = raw.factor.empty() ? (sim ? 2.0 : 4.0) : parse_number_flag("-f", raw.factor);
  if (!(o.factor > 1.0)) throw InvalidArgument("-f '" + shown(raw.factor) + "': the step factor must be > 1");
  if (!raw.step_bytes.empty()) {
    o.step_bytes = parse_bytes_flag("-i", raw.step_bytes);
    if (o.step_bytes == 0) throw InvalidArgument("-i '" + shown(raw.step_bytes) + "': the step must be at least 1 byte");
  }
  o.iterations = int_or(raw.iterations, "-n", o.iterations, 1, 1000000);
  o.warmup = int_or(raw.warmup, "-w", o.warmup, 0, 1000000);
  o.check = int_or(raw.check, "-c", 1, 0, 1) == 1;
  o.check_max_bytes = raw.check_max.empty() ? o.check_max_bytes : parse_bytes_flag("--check-max", raw.check_max);
  o.root = int_or(raw.root, "-r", 0, 0, 1 << 30);  // checked against the world size below and by the simulator
  if (!raw.ranks.empty()) {
    o.ranks = static_cast<int>(parse_int_flag("--ranks", raw.ranks, 1, kMaxEmulatedRanks,
                                              "emulated ranks are threads, at most " +
                                                  std::to_string(kMaxEmulatedRanks)));
  }
  if (sim && !raw.ranks.empty()) {
    throw InvalidArgument("--ranks " + raw.ranks + " with --backend sim: the simulator takes the world size from "
                          "--topology (e.g. h100-cluster-N for N nodes); use --ranks with --backend emu");
  }
  if (o.root >= o.ranks && !sim) {
    throw InvalidArgument("-r " + raw.root + ": the root must be a rank in [0, " + std::to_string(o.ranks - 1) +
                          "] (--ranks " + std::to_string(o.ranks) + ")");
  }
  (void)sweep_sizes(o);  // refuses bad or oversized sweeps before anything runs
  o.dtypes = parse_dtypes(raw.dtype);
  o.ops = parse_ops(raw.op);
  check_protocol(o.protocol);
  check_algorithm_name(o.algorithm, sim);
  if (!o.algorithm.empty() && !sim) {  // the simulator checks where its names apply itself
    for (OpKind k : o.collectives) {
      try {
        find_algorithm(k, o.algorithm);
      } catch (const InvalidArgument& e) {
        throw InvalidArgument(std::string("--algo (or TWINCCL_ALGO): ") + e.what());
      }
    }
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
