// What the emulator checks and where tests inject faults: emulator-only settings that a program
// passes through twinccl::RunOptions (twinccl/run.h) or twinccl::emu::EmulatorOptions (emulator.h).
//
//   RunOptions o;  o.check = CheckLevel::debug;          // poison async outputs until complete
//   o.fault_hook = [](const FaultPoint& p) {             // rank 2 fails inside its 3rd collective
//     if (p.rank == 2 && p.seq == 3 && p.stage == FaultStage::in_collective) throw
//     std::runtime_error("x"); return FaultAction::proceed;
//   };
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "twinccl/operation.h"

namespace twinccl {

// How much the emulator checks (TWINCCL_CHECK=0|1|2). Every level keeps the fingerprint check at
// each rendezvous (ranks must agree for the data to be right) and the timeout.
enum class CheckLevel : std::uint8_t {
  off,    // 0: no deadlock detection, no flight recorder, no Work bookkeeping
  on,     // 1 (default): wait-for graph deadlock detection, flight recorder, Works never waited on
  debug,  // 2: also poisons the output of an async operation (bytes 0xFF) until it completes,
          // and refuses host_span on Communicator::alloc buffers (GPU memory on NCCL)
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
  int rank = 0;           // world rank
  std::string_view comm;  // communicator name
  std::uint64_t seq = 0;  // the operation's sequence number on the communicator (collectives)
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

// The largest EmulatorOptions::max_p2p_lane_threads accepted: far above what a process can start
// (Linux's default threads-max is tens of thousands), so it only catches nonsense values.
inline constexpr int kMaxP2pLaneThreads = 1 << 20;

// The longest EmulatorOptions::timeout_s (as TWINCCL_TIMEOUT_S): about 116 days.
inline constexpr double kMaxTimeoutSeconds = 1e7;

// The most schedule channels (EmulatorOptions::channels): NCCL's MAXCHANNELS is 32 in its 2.x
// sources (src/include/device.h); 64 leaves room. Every channel is a part of every step, so
// INT_MAX channels ran for minutes before this cap.
inline constexpr int kMaxEmulatedChannels = 64;

// The most operations the flight recorder keeps per rank (as TWINCCL_FLIGHT_RECORDER_OPS).
inline constexpr std::size_t kMaxFlightRecorderOps = std::size_t{1} << 20;

}  // namespace twinccl
