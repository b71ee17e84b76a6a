// `twinccl perf` options: nccl-tests' flags plus TwinCCL's (backend, ranks, topology, output).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nccl_list_flags.h"
#include "topology_flags.h"
#include "twinccl/data_type.h"
#include "twinccl/operation.h"
#include "twinccl/reduce_op.h"
#include "xml_hint_flags.h"

namespace twinccl::sim {
class SelectionPolicy;
}

namespace twinccl::cli {

struct PerfOptions {
  std::vector<OpKind> collectives;   // empty = the default sweep
  std::size_t min_bytes = 8;         // -b
  std::size_t max_bytes = 16 << 20;  // -e
  double factor = 4;                 // -f (0 when -i is used)
  std::size_t step_bytes = 0;        // -i
  int iterations = 5;                // -n
  int warmup = 1;                    // -w
  bool check = true;                 // -c N > 0
  int check_count = 1;               // -c N: checked calls per row (nccl-tests' check count)
  int agg_iters = 1;                 // -m: calls per timed iteration
  int run_cycles = 1;                // -N: the sweep repeated this many times
  int average = 1;                   // -a: 0 rank 0, 1 mean, 2 min, 3 max over ranks
  int blocking = 0;                  // -z: 0 none, 1 wait + barrier per call, 2 wait, 3 per -n
  int nthreads = 0, ngpus = 0;       // -t, -g as given (0: not given)
  bool report_cputime = false;       // -C 1: "cputime" column
  bool report_timestamps = false;    // -S 1: a timestamp after each row
  int graph = 0, unalign = 0;        // -G, -u: printed in the header, no effect here
  std::string json_file;             // -J: nccl-tests' JSON output
  std::vector<std::string> ignored;  // "-G 1 (CUDA graphs)": flags accepted with no effect
  std::vector<std::string> argv;     // the command line, for -J's "args"
  std::size_t check_max_bytes = 256
                                << 20;  // --check-max: sim rows checked on the emulator up to this
  std::vector<DataType> dtypes{DataType::float32};  // -d
  std::vector<ReduceKind> ops{ReduceKind::sum};     // -o
  int root = 0;                                     // -r
  std::string backend = "sim";                      // --backend sim|emu|nccl
  int ranks = 8;                      // --ranks or -t x -g: world size (sim: 0 = every GPU)
  std::string topology;               // --topology (simulator)
  XmlHintFlags xml;                   // --gpu, --nvlink, --nic-gbps, ...: NCCL XML hints
  TopologyFlags edits;                // --set, --degrade, --fail: what-if edits of the topology
  std::string algorithm;              // --algo
  std::string protocol;               // --proto
  NcclListFlags nccl_lists;           // --algo / --proto in NCCL_ALGO / NCCL_PROTO syntax (sim)
  std::string fidelity = "analytic";  // --fidelity analytic|flow
  std::string nccl_version;           // --nccl-version X.Y.Z: rank as that NCCL ("" = newest)
  std::string format = "table";       // --format table|json|csv
  std::string trace_file;             // --trace
  bool links = false;                 // --links
  bool compare = false;               // --compare: every applicable algorithm/protocol per size
  bool plain = false;                 // --plain: nccl-tests' 13 columns only
  // Set by run_perf_command: the one selection policy on the --topology loaded once, with its
  // edits and XML hints (sim: dgx-h100 by default; measured runs without --topology: none), and
  // what the edits did. Every row's choice, prediction and check ask it.
  std::shared_ptr<const sim::SelectionPolicy> selection;
  std::vector<std::string> topology_notes;
};

// At most this many sizes in one sweep (-i 1 from 8 to 1M would be a million runs).
inline constexpr std::size_t kMaxSweepSizes = 4096;

// The sizes of the sweep, in bytes, nccl-tests style (-b, -e, -f or -i), ascending, without
// repeats. Never overflows; throws InvalidArgument naming the flags when -b > -e, -f <= 1, -b 0
// with -f, or the sweep would have more than kMaxSweepSizes sizes.
std::vector<std::size_t> sweep_sizes(const PerfOptions& o);

}  // namespace twinccl::cli
