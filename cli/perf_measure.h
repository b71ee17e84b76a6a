// `twinccl perf --backend emu|nccl`: runs the sweep for real (emulated ranks, or NCCL on GPUs)
// and measures wall time; #wrong compares every rank's output with the sequential reference
// model, bit for bit.
#pragma once

#include "perf_options.h"
#include "perf_table.h"

namespace twinccl::cli {

PerfReport run_measured_perf(const PerfOptions& options);

// nccl-tests' count: the per-rank count for collectives whose size is the whole gathered buffer.
std::size_t count_for(OpKind kind, std::size_t bytes, DataType dtype, int nranks);
// The count column: the whole buffer's elements.
std::size_t shown_count(OpKind kind, std::size_t count, int nranks);

struct RowResult {
  double time_us[2] = {0, 0};   // out-of-place, in-place (0 when iterations is 0)
  long long wrong[2] = {0, 0};  // elements differing from the reference model
};
// Runs one size of one collective on options.ranks ranks of options.backend: warmup and timed
// iterations, then (when options.check) one checked call, out-of-place then in-place.
RowResult measure_row(const PerfOptions& options, OpKind kind, DataType dtype, ReduceKind op, std::size_t count);

}  // namespace twinccl::cli
