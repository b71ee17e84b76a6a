// The one entry point of a TwinCCL program: the same code runs on the emulator or on NCCL.
//
//   int main(int argc, char** argv) {
//     return twinccl::run(argc, argv, [](twinccl::Communicator& world) { /* per-rank code */ });
//   }
//
// TWINCCL_BACKEND=emu (default): `fn` runs on TWINCCL_WORLD_SIZE threads (default 8) in this
// process. TWINCCL_BACKEND=nccl: `fn` runs once per process under torchrun/srun/mpirun (rank and
// size from their environment), or once per local GPU on a thread each when launched alone.
// The simulated time of an emulated run (TWINCCL_TOPOLOGY, TWINCCL_TIMELINE) is in
// TwinCCL::simtime: a program linked without it that sets them gets a ConfigError (exit 2) naming
// it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "twinccl/communicator.h"
#include "twinccl/emu/emulator.h"
#include "twinccl/emu/options.h"

namespace twinccl {

// RankFunction, flight_recorder_json (twinccl/emu/emulator.h), CheckLevel and the fault hooks
// (twinccl/emu/options.h) come from the emulator's headers.

// The emulator's options (world_size, algorithm, timeout_s, check, p2p_per_peer_streams,
// max_p2p_lane_threads, ...: every field of emu::EmulatorOptions, one row each in
// twinccl/emu/option_table.h with its TWINCCL_* variable) and what run() adds. run() sets
// default_algorithm (with a topology: the topology's choice), adds the trace recorder to
// on_rank_start (with a topology or a trace path) and leaves the rest to the emulator.
struct RunOptions : emu::EmulatorOptions {
  std::string backend = "emu";  // TWINCCL_BACKEND: "emu" or "nccl"
  std::string topology;         // TWINCCL_TOPOLOGY: simulated time at exit (emulator)
  std::string trace_path;       // TWINCCL_TRACE: save the emulated run's trace (twinccl replay)
  std::string timeline_path;    // TWINCCL_TIMELINE: Perfetto timeline of the simulated run
                                // (default twinccl-timeline.json when TWINCCL_TOPOLOGY is set)
};

// Reads TWINCCL_BACKEND, TWINCCL_TOPOLOGY, TWINCCL_TRACE, TWINCCL_TIMELINE and the variable of
// every emulator option in the table (TWINCCL_WORLD_SIZE, TWINCCL_ALGO, TWINCCL_TIMEOUT_S,
// TWINCCL_CHECK, ...: twinccl/emu/option_table.h), the one place the environment is read.
// Strict: integers are decimal digits only and in the row's range, names must be known ones
// (TWINCCL_ALGO: a registered algorithm). Throws ConfigError naming the variable and the value
// (and the valid names) for anything else; an empty variable is unset.
RunOptions options_from_environment();

// Runs `fn` as every rank of the world the options describe. Rethrows the first rank's error
// (the other ranks get AbortedError instead of hanging).
void run(const RunOptions& options, const RankFunction& fn);

// main() helper: options from the environment; prints the error and returns 1 when a rank
// failed, 2 for a configuration error, 0 on success.
int run(int argc, char** argv, const RankFunction& fn);

}  // namespace twinccl
