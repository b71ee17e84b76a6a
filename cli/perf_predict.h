// `twinccl perf --backend sim`: the table predicted for a topology by the simulator.
#pragma once

#include "perf_options.h"
#include "perf_table.h"

namespace twinccl::cli {

// Loads --topology once (dgx-h100 for the simulator when none), with --set/--degrade/--fail and
// the XML hints, into options.selection (an empty policy for a measured run without --topology).
void load_perf_selection(PerfOptions& options);

// Needs load_perf_selection first (so does add_predictions).
PerfReport run_predicted_perf(const PerfOptions& options);

// Measured rows (emu, nccl) get the simulator's prediction for options.topology beside them.
void add_predictions(PerfReport& report, const PerfOptions& options);

}  // namespace twinccl::cli
