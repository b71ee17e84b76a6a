// The emulator side of twinccl::run(): RunOptions turned into the emulator's options, with what
// the emulator asks of the simulator (the default algorithm on TWINCCL_TOPOLOGY, the simulated
// time of the run) handed in from here.
//
//   // backends/backend_registry.cc, for options.backend == "emu":
//   twinccl::emu_backend::run_emulated(options, fn);
#pragma once

#include "twinccl/run.h"

namespace twinccl::emu_backend {

// Runs fn on options.world_size threads (emu::run_world); with TWINCCL_TOPOLOGY / TWINCCL_TRACE
// every rank's calls are recorded and, after a successful run, the trace is saved and replayed.
void run_emulated(const RunOptions& options, const RankFunction& fn);

}  // namespace twinccl::emu_backend
