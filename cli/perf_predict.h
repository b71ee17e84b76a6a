// `twinccl perf --backend sim`: the table predicted for a topology by the simulator.
#pragma once

#include "perf_options.h"
#include "perf_table.h"

namespace twinccl::cli {

PerfReport run_predicted_perf(const PerfOptions& options);

// Measured rows (emu, nccl) get the simulator's prediction for options.topology beside them.
void add_predictions(PerfReport& report, const PerfOptions& options);

}  // namespace twinccl::cli
