#include "perf_flags.h"

#include <fmt/format.h>

#include <iostream>

#include "flag_values.h"
#include "twinccl/errors.h"
#include "twinccl/run.h"

namespace twinccl::cli {
namespace {

const std::vector<ReduceKind> kAllReduceKinds{ReduceKind::sum, ReduceKind::prod,
                                              ReduceKind::min, ReduceKind::max,
                                              ReduceKind::avg, ReduceKind::premul_sum};

std::vector<DataType> parse_dtypes(const std::string& text) {
  if (text == "all") return {kAllDataTypes.begin(), kAllDataTypes.end()};
  try {
    return {parse_data_type(text)};
  } catch (const InvalidArgument&) {
    throw InvalidArgument(
        "-d '" + shown(text) +
        "': unknown data type; valid: int8, uint8, int32, uint32, int64, "
        "uint64, half, float, double, bfloat16, f8e4m3, f8e5m2 (or float32, float16, ...), all");
  }
}

std::vector<ReduceKind> parse_ops(const std::string& text) {
  if (text == "all") return kAllReduceKinds;
  if (text == "mulsum") return {ReduceKind::premul_sum};  // nccl-tests' name
  try {
    return {parse_reduce_kind(text)};
  } catch (const InvalidArgument&) {
    throw InvalidArgument("-o '" + shown(text) +
                          "': unknown reduction; valid: sum, prod, min, max, avg, mulsum "
                          "(premul_sum), all");
  }
}

int int_or(const std::string& text, std::string_view flag, int fallback, int min, int max) {
  return text.empty() ? fallback : static_cast<int>(parse_int_flag(flag, text, min, max));
}

// Accepted for nccl-tests scripts, checked as numbers, and without effect on an emulator or a
// simulator: named in the header as ignored.
struct IgnoredFlag {
  const char* names;  // CLI11 names
  const char* what;   // what it controls in nccl-tests
  long long max;
  std::string RawPerfFlags::*value;
};
const IgnoredFlag kIgnored[] = {
    {"-p,--parallel_init", "parallel init", 1, &RawPerfFlags::parallel_init},
    {"-y,--stream_null", "null CUDA stream", 1, &RawPerfFlags::stream_null},
    {"-T,--timeout", "timeout", 1000000, &RawPerfFlags::timeout},
    {"-R,--local_register", "buffer registration", 2, &RawPerfFlags::local_register},
    {"-x,--cta_policy", "CTA policy", 2, &RawPerfFlags::cta_policy},
    {"-D,--device_implementation", "device API", 1000, &RawPerfFlags::device_impl},
    {"-V,--device_cta_count", "device-API CTAs", 128, &RawPerfFlags::device_ctas},
    {"-M,--memory", "GPU memory report", 1, &RawPerfFlags::memory},
    {"-u,--unalign", "buffer misalignment", 1000000, &RawPerfFlags::unalign},
    {"-I,--per_iter_timing", "per-iteration timing", 1, &RawPerfFlags::per_iter},
    {"-K,--per_iter_skip", "per-iteration skip", 1000000, &RawPerfFlags::per_iter_skip},
};

// -G N: CUDA graphs, on NCCL only (cli/perf_timing.h); the simulator names it ignored. With -z,
// as nccl-tests 2.19 (src/common.cu): -z 3 is turned off with a note; -z 1/2 would wait for a call
// inside the capture, which CUDA refuses (cudaStreamQuery on a capturing stream): refused here.
void apply_graph_flag(PerfOptions& o) {
  if (o.backend == "sim") {
    o.ignored.push_back(fmt::format("-G {} (CUDA graphs)", o.graph));
    return;
  }
  if (o.backend != "nccl") {
    throw InvalidArgument(fmt::format(
        "-G {}: CUDA graphs exist on the NCCL backend only (--backend nccl); the {} backend has "
        "none (drop -G, or use -G 0)",
        o.graph, o.backend));
  }
  if (o.blocking == 3) {
    std::cerr << "twinccl perf: blocking mode (-z 3) is incompatible with CUDA graph mode (-G): "
                 "blocking disabled, as nccl-tests does\n";
    o.blocking = 0;
  } else if (o.blocking != 0) {
    throw InvalidArgument(fmt::format(
        "-z {} with -G {}: waiting for each call inside a CUDA graph capture is impossible (CUDA "
        "refuses cudaStreamQuery on a capturing stream; nccl-tests fails there too); use -z 0 or "
        "-z 3, or drop -G",
        o.blocking, o.graph));
  }
}

}  // namespace

void add_nccl_tests_flags(CLI::App* cmd, RawPerfFlags& raw) {
  // nccl-tests: a flag given twice takes the last value.
  auto last = [](CLI::Option* opt) {
    return opt->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  };
  auto flag = [&](const char* names, std::string& into, const std::string& help) {
    return last(cmd->add_option(names, into, help));
  };
  flag("-b,--minbytes", raw.min_bytes,
       "smallest size (K/M/G/T suffixes, powers of 1024, 1.5M allowed; default 8)");
  flag("-e,--maxbytes", raw.max_bytes, "largest size (default 16M emu, 8G sim; at most 1P)");
  flag("-f,--stepfactor", raw.factor,
       "multiply the size by this factor > 1 (default 4 emu, 2 sim); -f 1 adds -i");
  flag("-i,--stepbytes", raw.step_bytes,
       "add this many bytes (used when -f is not > 1, as in nccl-tests)");
  flag("-n,--iters", raw.iterations, "timed iterations per size, 1..1000000 (default 5)");
  flag("-w,--warmup_iters", raw.warmup, "warmup iterations, 0..1000000 (default 1)");
  flag("-m,--agg_iters", raw.agg_iters,
       "calls aggregated per timed iteration, 1..1000 (default 1)");
  flag("-N,--run_cycles", raw.run_cycles, "run the sweep this many times, 1..1000 (default 1)");
  last(cmd->add_option("-c,--check", raw.check,
                       "checked calls per size (#wrong), 0 = no check (default 1)")
           ->expected(0, 1)
           ->default_str("1"));  // what `-c` alone means; `-c ''` stays an empty value
  flag("--check-max", raw.check_max,
       "sim: check rows on the emulator while all buffers fit in this (default 256M)");
  flag("-d,--datatype", raw.dtype, "float, half, bfloat16, double, int32, f8e4m3, ... or all");
  flag("-o,--op", raw.op, "sum, prod, min, max, avg, mulsum or all");
  flag("-r,--root", raw.root, "root rank of rooted collectives (default 0)");
  flag("-t,--nthreads", raw.nthreads, "threads per process: world size = -t x -g ranks");
  flag("-g,--ngpus", raw.ngpus,
       "GPUs per thread: world size = -t x -g (sim: the first N GPUs of --topology)");
  flag("--ranks", raw.ranks,
       "world size: emulated ranks (threads), 1.." + std::to_string(kMaxEmulatedRanks) +
           " (default 8); sim: the first N GPUs of --topology (default all); nccl: the launcher's "
           "world "
           "size (default; a different value is refused)");
  flag("-a,--average", raw.average,
       "time reported over ranks: 0 rank 0, 1 mean (default), 2 min, 3 max");
  flag("-z,--blocking", raw.blocking,
       "emu/nccl: 1 wait for each call and barrier, 2 wait for each call, 3 wait and barrier "
       "after each -n iteration, timing the calls only (nccl-tests' -z; default 0)");
  flag("-G,--cudagraph", raw.graph,
       "nccl: capture the -n iterations into a CUDA graph and launch it this many times, "
       "0..1000000 (nccl-tests' -G; default 0; the emulator has no CUDA graphs)");
  flag("-C,--report_cputime", raw.cputime,
       "1: report the host time to issue the calls (nccl-tests' cputime) instead of the time");
  flag("-S,--report_timestamps", raw.timestamps, "1: a timestamp after each row");
  flag("-J,--output_file", raw.json_file, "also write nccl-tests' JSON (schema v3) to this file");
  for (const IgnoredFlag& f : kIgnored) {
    flag(f.names, raw.*f.value,
         fmt::format("0..{}; accepted for nccl-tests scripts, ignored here ({})", f.max, f.what));
  }
}

void apply_nccl_tests_flags(const RawPerfFlags& raw, PerfOptions& o) {
  const bool sim = o.backend == "sim";
  o.min_bytes = raw.min_bytes.empty() ? 8 : parse_bytes_flag("-b", raw.min_bytes);
  o.max_bytes = raw.max_bytes.empty() ? (sim ? std::size_t{8} << 30 : std::size_t{16} << 20)
                                      : parse_bytes_flag("-e", raw.max_bytes);
  // nccl-tests steps by the factor when it is > 1 and by -i otherwise (size*f or size+i).
  o.factor = raw.factor.empty() ? (raw.step_bytes.empty() ? (sim ? 2.0 : 4.0) : 1.0)
                                : parse_number_flag("-f", raw.factor);
  if (!(o.factor >= 1.0))
    throw InvalidArgument("-f '" + shown(raw.factor) +
                          "': the step factor must be > 1 (or 1 to step by -i)");
  o.step_bytes = 0;
  if (o.factor == 1.0) {
    o.step_bytes =
        raw.step_bytes.empty() ? std::size_t{1} << 20 : parse_bytes_flag("-i", raw.step_bytes);
    if (o.step_bytes == 0)
      throw InvalidArgument("-i '" + shown(raw.step_bytes) + "': the step must be at least 1 byte");
  } else if (!raw.step_bytes.empty()) {
    (void)parse_bytes_flag("-i", raw.step_bytes);
    o.ignored.push_back(
        fmt::format("-i {} (-f {} > 1 multiplies, as in nccl-tests)", raw.step_bytes, raw.factor));
  }
  o.iterations = int_or(raw.iterations, "-n", o.iterations, 1, 1000000);
  o.warmup = int_or(raw.warmup, "-w", o.warmup, 0, 1000000);
  o.agg_iters = int_or(raw.agg_iters, "-m", 1, 1, 1000);
  o.run_cycles = int_or(raw.run_cycles, "-N", 1, 1, 1000);
  o.check_count = int_or(raw.check, "-c", 1, 0, 1000);
  o.check = o.check_count > 0;
  o.check_max_bytes =
      raw.check_max.empty() ? o.check_max_bytes : parse_bytes_flag("--check-max", raw.check_max);
  o.root = int_or(raw.root, "-r", 0, 0, 1 << 30);  // checked against the world size later
  o.average = int_or(raw.average, "-a", 1, 0, 3);
  o.blocking = int_or(raw.blocking, "-z", 0, 0, 3);
  if (sim && o.blocking != 0) o.ignored.push_back(fmt::format("-z {} (blocking)", o.blocking));
  o.graph = int_or(raw.graph, "-G", 0, 0, 1000000);
  if (o.graph > 0) apply_graph_flag(o);
  o.report_cputime = int_or(raw.cputime, "-C", 0, 0, 1) == 1;
  o.report_timestamps = int_or(raw.timestamps, "-S", 0, 0, 1) == 1;
  o.json_file = raw.json_file;
  const std::string why_ranks =
      "emulated ranks are threads, at most " + std::to_string(kMaxEmulatedRanks);
  o.nthreads = int_or(raw.nthreads, "-t", 0, 1, kMaxEmulatedRanks);
  o.ngpus = int_or(raw.ngpus, "-g", 0, 1, kMaxEmulatedRanks);
  int world = 0;
  if (o.nthreads > 0 || o.ngpus > 0) {
    world = std::max(o.nthreads, 1) * std::max(o.ngpus, 1);
    if (world > kMaxEmulatedRanks) {
      throw InvalidArgument(fmt::format("-t {} x -g {} = {} ranks: {}", std::max(o.nthreads, 1),
                                        std::max(o.ngpus, 1), world, why_ranks));
    }
  }
  if (!raw.ranks.empty()) {
    int ranks =
        static_cast<int>(parse_int_flag("--ranks", raw.ranks, 1, kMaxEmulatedRanks, why_ranks));
    if (world > 0 && ranks != world) {
      throw InvalidArgument(
          fmt::format("--ranks {} and -t x -g = {} disagree; give one of them", ranks, world));
    }
    world = ranks;
  }
  if (world > 0) o.ranks = world;
  if (sim && world == 0) o.ranks = 0;  // every GPU of the topology
  o.dtypes = parse_dtypes(raw.dtype);
  o.ops = parse_ops(raw.op);
  for (const IgnoredFlag& f : kIgnored) {
    const std::string& text = raw.*f.value;
    if (text.empty()) continue;
    const std::string name = std::string(f.names).substr(0, 2);
    const long long v = parse_int_flag(name, text, 0, f.max);
    if (name == "-u") o.unalign = static_cast<int>(v);
    o.ignored.push_back(fmt::format("{} {} ({})", name, v, f.what));
  }
}

}  // namespace twinccl::cli
