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

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "twinccl/communicator.h"

namespace twinccl {

using RankFunction = std::function<void(Communicator& world)>;

// How much the emulator checks (TWINCCL_CHECK=0|1|2). Every level keeps the fingerprint check at
// each rendezvous (ranks must agree for the data to be right) and the timeout.
enum class CheckLevel : std::uint8_t {
  off,    // 0: no deadlock detection, no flight recorder, no Work bookkeeping
  on,     // 1 (default): wait-for graph deadlock detection, flight recorder, Works never waited on
  debug,  // 2: also poisons the output of an async operation (bytes 0xFF) until it completes
};

// Fault injection (emulator only): where a rank is inside an operation when the hook is called.
enum class FaultStage : std::uint8_t {
  before_collective,  // issued, not yet at the rendezvous
  in_collective,      // every rank arrived; before any byte moved
  before_p2p,         // a send/recv (or a group holding one) is about to post
  thread_start,       // a thread is about to be created: a rank's (comm empty) or a communicator's
                      // stream worker; throwing here acts as the system refusing the thread
};

struct FaultPoint {
  int rank = 0;                 // world rank
  std::string_view comm;        // communicator name
  std::uint64_t seq = 0;        // the operation's sequence number on the communicator (collectives)
  OpKind kind = OpKind::barrier;
  FaultStage stage = FaultStage::before_collective;
};

// What the hook asks for. To make the rank fail mid-operation, throw from the hook; to make it a
// straggler, sleep in it.
enum class FaultAction : std::uint8_t { proceed, abort_communicator };
using FaultHook = std::function<FaultAction(const FaultPoint&)>;

// The most emulated ranks one run may have: each rank is an OS thread with its own stack and
// buffers, so TWINCCL_WORLD_SIZE and `twinccl perf --ranks` stop here with a message saying so.
inline constexpr int kMaxEmulatedRanks = 4096;

struct RunOptions {
  std::string backend = "emu";     // "emu" or "nccl"
  int world_size = 8;              // emulator ranks (threads)
  std::string algorithm;           // TWINCCL_ALGO: force an algorithm for every collective
  std::string topology;            // TWINCCL_TOPOLOGY: simulated time at exit (emulator)
  std::string trace_path;          // TWINCCL_TRACE: save the emulated run's trace (twinccl replay)
  std::string timeline_path;       // TWINCCL_TIMELINE: Perfetto timeline of the simulated run
                                   // (default twinccl-timeline.json when TWINCCL_TOPOLOGY is set)
  double timeout_s = 300.0;        // TWINCCL_TIMEOUT_S: longest wait for another rank
  bool schedule_path = false;      // TWINCCL_EMU_PATH=schedule: never use the fast direct path
  CheckLevel check = CheckLevel::on;     // TWINCCL_CHECK=0|1|2 (emulator)
  std::size_t flight_recorder_ops = 64;  // TWINCCL_FLIGHT_RECORDER_OPS: operations kept per rank
  std::string flight_recorder_path;      // TWINCCL_FLIGHT_RECORDER: JSON dump written when a run fails
  FaultHook fault_hook;                  // emulator fault injection (tests); empty = none
  // Emulator schedule parameters (the schedule path uses them; non-default values turn the fast
  // path off): channels, pipelining chunk and ranks per node for tree/hierarchical algorithms.
  int channels = 1;
  std::size_t chunk_elements = 0;
  int ranks_per_node = 0;
};

// Reads TWINCCL_BACKEND, TWINCCL_WORLD_SIZE, TWINCCL_ALGO, TWINCCL_TOPOLOGY, TWINCCL_TRACE, TWINCCL_TIMELINE, TWINCCL_TIMEOUT_S,
// TWINCCL_EMU_PATH, TWINCCL_CHECK, TWINCCL_FLIGHT_RECORDER(_OPS) (the one place the environment is
// read). Strict: integers are decimal digits only and in range (TWINCCL_WORLD_SIZE 1..kMaxEmulatedRanks),
// names must be known ones (TWINCCL_ALGO: a registered algorithm). Throws ConfigError naming the
// variable and the value (and the valid names) for anything else; an empty variable is unset.
RunOptions options_from_environment();

// Runs `fn` as every rank of the world the options describe. Rethrows the first rank's error
// (the other ranks get AbortedError instead of hanging).
void run(const RunOptions& options, const RankFunction& fn);

// main() helper: options from the environment; prints the error and returns 1 when a rank
// failed, 2 for a configuration error, 0 on success.
int run(int argc, char** argv, const RankFunction& fn);

// The emulator's flight recorder as JSON: the last operations of every rank of the run `comm`
// belongs to, with their state (scheduled, started, completed, failed). "{}" on other backends or
// with CheckLevel::off.
std::string flight_recorder_json(const Communicator& comm);

}  // namespace twinccl
