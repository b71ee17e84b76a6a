// nccl-tests' command-line flags for `twinccl perf`, flag for flag (nccl-tests 2.19's getopt
// list: -t -g -b -e -i -f -n -m -w -N -p -c -o -d -r -z -y -T -G -C -S -J -a -R -x -D -V -M -u -I
// -K, with the same long names). Values are kept as typed and parsed strictly afterwards, so a bad
// value is a usage error naming the flag instead of strtol's silent 0. Flags that have no meaning
// on an emulator or a simulator (CUDA graphs, blocking, buffer registration, ...) are accepted and
// listed in the header as ignored.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "perf_options.h"

namespace twinccl::cli {

struct RawPerfFlags {
  std::vector<std::string> collectives;
  std::string min_bytes, max_bytes, step_bytes, factor, iterations, warmup, check, check_max, root,
      ranks;
  std::string dtype = "float", op = "sum";
  std::string nthreads, ngpus, agg_iters, run_cycles, average, cputime, timestamps, json_file;
  // Accepted, validated as numbers, and without effect here.
  std::string parallel_init, blocking, stream_null, timeout, graph, local_register, cta_policy,
      device_impl, device_ctas, memory, unalign, per_iter, per_iter_skip;
};

// Adds nccl-tests' flags (and --ranks, --check-max) to `perf`; values land in `raw`.
void add_nccl_tests_flags(CLI::App* perf, RawPerfFlags& raw);

// Parses every flag of `raw` into `o` (o.backend must be set): sizes, steps (nccl-tests' rule:
// -f > 1 multiplies and -i is then unused; -f 1 adds -i), counts, world size from --ranks or
// -t x -g, and the notes about ignored flags. Throws InvalidArgument naming the flag.
void apply_nccl_tests_flags(const RawPerfFlags& raw, PerfOptions& o);

}  // namespace twinccl::cli
