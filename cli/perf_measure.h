// `twinccl perf --backend emu|nccl`: runs the sweep for real (emulated ranks, or NCCL on GPUs)
// and measures wall time; #wrong compares every rank's output with the sequential reference
// model, bit for bit.
#pragma once

#include "perf_options.h"
#include "perf_table.h"

namespace twinccl::cli {

PerfReport run_measured_perf(const PerfOptions& options);

}  // namespace twinccl::cli
