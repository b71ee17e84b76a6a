// `twinccl perf --backend emu|nccl`: runs the sweep for real (emulated ranks, or NCCL on GPUs)
// and measures wall time; #wrong compares every rank's output with the sequential reference
// model, bit for bit.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "perf_options.h"
#include "perf_table.h"
#include "twinccl/call_layout.h"
#include "twinccl/communicator.h"
#include "twinccl/reference.h"
#include "twinccl/run.h"

namespace twinccl::cli {

PerfReport run_measured_perf(const PerfOptions& options);

// On GPUs each process keeps every rank's input on the host for the reference. True when a row's
// check (`need_bytes` on the host) fits in what one process may hold (half the physical memory or
// of ulimit -v, shared by the launcher's processes on this node); else says on stderr that `row`
// is timed unchecked and returns false. The emulator's sweep is checked up front instead
// (check_emulator_memory), so for it this is just options.check.
bool check_fits_in_host(const PerfOptions& options, double need_bytes, const std::string& row);

// The world the backend starts in this process (NCCL: the launcher's world size, or every visible
// GPU of a process started alone): what `perf --backend nccl` measures when no --ranks is given.
int launched_world_size(const std::string& backend);

// nccl-tests' count for a size: the whole buffer's elements, or for collectives whose size is the
// whole gathered buffer the per-rank count rounded down to 16 bytes, as nccl-tests rounds it.
std::size_t count_for(OpKind kind, std::size_t bytes, DataType dtype, int nranks);
// nccl-tests' size column for that count: the largest buffer of a rank.
std::size_t bytes_for(OpKind kind, std::size_t count, DataType dtype, int nranks);
// Today's date and time as nccl-tests' -S column prints it.
std::string timestamp_now();

struct RowResult {
  double time_us[2] = {0, 0};          // out-of-place, in-place (0 when iterations is 0)
  long long wrong[2] = {0, 0};         // elements differing from the reference model
  bool unchecked[2] = {false, false};  // timed but not checked (sendrecv in place): "N/A"
  std::string finished_at;             // -S: when the row was measured (timestamp_now)
  std::string
      algorithm;  // what the emulator ran: --algo, else its default (the tuner's with --topology)
};
// One row of the sweep as every rank runs it, prepared once per process before it runs.
struct RowPlan {
  OpDesc call;                // kind (sendrecv/hypercube: kSendRecvTest/kHypercubeTest),
                              // dtype, count, root, rank 0's op
  std::vector<ReduceOp> ops;  // every rank's op (premul_sum: a scalar per rank)
  std::vector<Bytes> inputs;  // every rank's input, for the reference; empty when unchecked
  bool check = false;         // -c and the inputs fit in host memory (check_fits_in_host)
  std::string algorithm;      // what the emulator runs (--algo, else its default)
};
RowPlan plan_row(const PerfOptions& options, OpKind kind, DataType dtype, ReduceKind op,
                 std::size_t count);
// Runs the row on `comm` (every rank calls it): warmup and timed iterations of -m calls each,
// then (when plan.check) up to -c checked calls, out-of-place then in-place; the time over ranks
// is combined as -a says (rank 0, mean, min or max). Rank 0 writes `result` under `mu`.
// `arena`: the row's buffers are views of it (made once for the sweep), else allocated per row.
void run_row(Communicator& comm, const PerfOptions& options, const RowPlan& plan, RowResult& result,
             std::mutex& mu, const CallArena* arena = nullptr);
// The run a measured sweep starts: options.backend, options.ranks, `algorithm` forced.
RunOptions run_options(const PerfOptions& options, const std::string& algorithm);
// ConfigError unless the world has --ranks ranks.
void check_world_size(const Communicator& comm, int ranks);

// One row in a run of its own (the emulator: each row with its own algorithm forced).
RowResult measure_row(const PerfOptions& options, OpKind kind, DataType dtype, ReduceKind op,
                      std::size_t count);

// Every row in ONE run (NCCL: one communicator for the whole sweep, as nccl-tests; a run per row
// spent ~2.4 s of initialisation each on an H200). A process plans each row once; its rank threads
// (one per GPU when a process drives several) share the plan.
struct RowSpec {
  OpKind kind;
  DataType dtype;
  ReduceKind op;
  std::size_t count;
};
std::vector<RowResult> measure_rows_in_one_run(const PerfOptions& options,
                                               const std::vector<RowSpec>& rows);
// The rows of a sweep on `nranks` ranks in nccl-tests' order: collective, data type, op (-o's for
// a reducing collective, else sum), -N cycles, sizes; a size that rounds to no element per rank is
// left out (size 0 itself stays). starts_sweep: row i opens a (collective, data type, op).
std::vector<RowSpec> sweep_rows(const PerfOptions& options, int nranks);
bool starts_sweep(const std::vector<RowSpec>& rows, std::size_t i);

}  // namespace twinccl::cli
