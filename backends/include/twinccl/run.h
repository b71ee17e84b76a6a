// The one entry point of a TwinCCL program: the same code runs on the emulator or on NCCL.
//
//   int main(int argc, char** argv) {
//     return twinccl::run(argc, argv, [](twinccl::Communicator& world) { /* per-rank code */ });
//   }
//
// TWINCCL_BACKEND=emu (default): `fn` runs on TWINCCL_WORLD_SIZE threads (default 8) in this process.
// TWINCCL_BACKEND=nccl: `fn` runs once per process under torchrun/srun/mpirun (rank and size from
// their environment), or once per local GPU on a thread each when launched alone.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "twinccl/communicator.h"

namespace twinccl {

using RankFunction = std::function<void(Communicator& world)>;

struct RunOptions {
  std::string backend = "emu";     // "emu" or "nccl"
  int world_size = 8;              // emulator ranks (threads)
  std::string algorithm;           // TWINCCL_ALGO: force an algorithm for every collective
  std::string topology;            // TWINCCL_TOPOLOGY: for simulated time (emulator)
  double timeout_s = 300.0;        // TWINCCL_TIMEOUT_S: longest wait for another rank
  bool schedule_path = false;      // TWINCCL_EMU_PATH=schedule: never use the fast direct path
};

// Reads TWINCCL_BACKEND, TWINCCL_WORLD_SIZE, TWINCCL_ALGO, TWINCCL_TOPOLOGY, TWINCCL_TIMEOUT_S,
// TWINCCL_EMU_PATH (the one place the environment is read). Throws ConfigError for bad values.
RunOptions options_from_environment();

// Runs `fn` as every rank of the world the options describe. Rethrows the first rank's error
// (the other ranks get AbortedError instead of hanging).
void run(const RunOptions& options, const RankFunction& fn);

// main() helper: options from the environment; prints the error and returns 1 when a rank
// failed, 2 for a configuration error, 0 on success.
int run(int argc, char** argv, const RankFunction& fn);

}  // namespace twinccl
