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

// RankFunction, flight_recorder_json (twinccl/emu/emulator.h) and the emulator-only settings
// below, CheckLevel and the fault hooks (twinccl/emu/options.h), come from the emulator's headers.

struct RunOptions {
  std::string backend = "emu";  // "emu" or "nccl"
  int world_size = 8;           // emulator ranks (threads)
  std::string algorithm;        // TWINCCL_ALGO: force an algorithm for every collective
  std::string topology;         // TWINCCL_TOPOLOGY: simulated time at exit (emulator)
  std::string trace_path;       // TWINCCL_TRACE: save the emulated run's trace (twinccl replay)
  std::string timeline_path;    // TWINCCL_TIMELINE: Perfetto timeline of the simulated run
                                // (default twinccl-timeline.json when TWINCCL_TOPOLOGY is set)
  double timeout_s = 300.0;     // TWINCCL_TIMEOUT_S: longest wait for another rank
  bool schedule_path = false;   // TWINCCL_EMU_PATH=schedule: never use the fast direct path
  CheckLevel check = CheckLevel::on;     // TWINCCL_CHECK=0|1|2 (emulator)
  std::size_t flight_recorder_ops = 64;  // TWINCCL_FLIGHT_RECORDER_OPS: operations kept per rank
  std::string flight_recorder_path;  // TWINCCL_FLIGHT_RECORDER: JSON dump written when a run fails
  FaultHook fault_hook;              // emulator fault injection (tests); empty = none
  // TWINCCL_P2P_STREAMS=per_peer: send/recv on one stream per (peer, direction), as torch's
  // ProcessGroupNCCL (Python's twinccl.run always); comm (default): NCCL's one stream per
  // communicator (EmulatorOptions::p2p_per_peer_streams).
  bool p2p_per_peer_streams = false;
  // TWINCCL_MAX_P2P_LANE_THREADS: with per-peer streams, the most lane threads alive at once
  // (1..kMaxP2pLaneThreads; EmulatorOptions::max_p2p_lane_threads).
  int max_p2p_lane_threads = 8192;
  // Emulator schedule parameters (the schedule path uses them; non-default values turn the fast
  // path off): channels, pipelining chunk and ranks per node for tree/hierarchical algorithms.
  int channels = 1;
  std::size_t chunk_elements = 0;
  int ranks_per_node = 0;
};

// Reads TWINCCL_BACKEND, TWINCCL_WORLD_SIZE, TWINCCL_ALGO, TWINCCL_TOPOLOGY, TWINCCL_TRACE,
// TWINCCL_TIMELINE, TWINCCL_TIMEOUT_S, TWINCCL_EMU_PATH, TWINCCL_CHECK,
// TWINCCL_FLIGHT_RECORDER(_OPS), TWINCCL_P2P_STREAMS, TWINCCL_MAX_P2P_LANE_THREADS (the one place
// the environment is read). Strict: integers are
// decimal digits only and in range (TWINCCL_WORLD_SIZE 1..kMaxEmulatedRanks), names must be known
// ones (TWINCCL_ALGO: a registered algorithm). Throws ConfigError naming the variable and the value
// (and the valid names) for anything else; an empty variable is unset.
RunOptions options_from_environment();

// Runs `fn` as every rank of the world the options describe. Rethrows the first rank's error
// (the other ranks get AbortedError instead of hanging).
void run(const RunOptions& options, const RankFunction& fn);

// main() helper: options from the environment; prints the error and returns 1 when a rank
// failed, 2 for a configuration error, 0 on success.
int run(int argc, char** argv, const RankFunction& fn);

}  // namespace twinccl
