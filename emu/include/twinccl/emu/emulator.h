// The emulator: every rank an OS thread in this process with its own Communicator, moving real
// bytes (docs/architecture.md). twinccl::run() calls it for TWINCCL_BACKEND=emu; a program may too.
//
//   emu::EmulatorOptions o;  o.world_size = 4;
//   o.default_algorithm = [](const OpDesc& op, const std::vector<int>& ranks) { return "ring"; };
//   emu::run_world(o, [](Communicator& world) { /* per-rank code */ });
//
// The emulator knows nothing of the simulator: what it needs from outside (the default algorithm
// for a topology, recording for simulated time) comes in through the options below.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "twinccl/communicator.h"
#include "twinccl/emu/options.h"

namespace twinccl {

// The per-rank code of a program: called once per rank with its world communicator.
using RankFunction = std::function<void(Communicator& world)>;

// The emulator's flight recorder as JSON: the last operations of every rank of the run `comm`
// belongs to, with their state (scheduled, started, completed, failed). "{}" on other backends or
// with CheckLevel::off.
std::string flight_recorder_json(const Communicator& comm);

// How long the calling rank waits for its peers in `comm`'s operations before a TimeoutError:
// `seconds` (> 0; above kMaxTimeoutSeconds it is that) instead of the run's timeout_s
// (TWINCCL_TIMEOUT_S), longer or shorter; `source` names in that error what set it ("the process
// group's timeout=0:00:02"). For the operations issued after the call (torch's set_timeout).
// InvalidArgument for seconds <= 0 or NaN, or a communicator of another backend.
void set_wait_timeout(Communicator& comm, double seconds, std::string source);

}  // namespace twinccl

namespace twinccl::emu {

// The algorithm a collective runs when neither the call nor EmulatorOptions::algorithm forces one:
// a name from algorithms.h for `op` on a communicator of these world ranks.
using AlgorithmChooser =
    std::function<std::string(const OpDesc& op, const std::vector<int>& world_ranks)>;

struct EmulatorOptions {
  int world_size = 8;                  // ranks (threads)
  std::string algorithm;               // forced for every collective that has it (TWINCCL_ALGO)
  AlgorithmChooser default_algorithm;  // empty: ring where it exists, else direct
  double timeout_s = 300.0;            // longest wait for another rank
  bool schedule_path = false;          // never take the direct fast path
  // Schedule parameters (algorithms.h AlgorithmParams; non-default values turn the fast path
  // off): channels, pipelining chunk and ranks per node for tree/hierarchical algorithms.
  int channels = 1;
  std::size_t chunk_elements = 0;
  int ranks_per_node = 0;
  CheckLevel check = CheckLevel::on;
  std::size_t flight_recorder_ops = 64;  // operations kept per rank
  std::string flight_recorder_path;      // JSON dump written when a run fails
  FaultHook fault_hook;                  // fault injection (tests); empty = none
  // false (NCCL): a communicator's send/recv run in issue order with its collectives, on one
  // stream. true (torch's ProcessGroupNCCL, which gives each pair of ranks its own communicator):
  // send/recv run on one stream per (peer, direction), so an irecv issued before an isend in a ring
  // does not hold the isend back; order within a (sender, receiver) pair is kept, a blocking send
  // still waits for its recv, and groups' send/recv go to those streams too (docs/python.md).
  bool p2p_per_peer_streams = false;
  // With p2p_per_peer_streams: the most lane threads alive in the run at once (a lane's thread
  // runs while it has send/recv in flight and ends when idle; a 64-rank all-to-all with every
  // isend and irecv in flight needs 64 x 126). Beyond it the call that needs one more throws
  // ConfigError naming this option and the count.
  int max_p2p_lane_threads = 8192;
  // Called on each rank's thread with its world communicator before `fn` (e.g. to attach an
  // observer: trace::TraceRecorder::record).
  std::function<void(Communicator& world)> on_rank_start;
  // Called on run_world's calling thread every kStopPollPeriod while ranks run (twinccl.run
  // checks Python's Ctrl-C there). A non-empty answer stops the run: the world is aborted with
  // "the run was stopped: <answer>" (every emulator wait ends with AbortedError within a poll
  // period, queued operations are cancelled), it is still called until every rank returned, and
  // run_world then throws AbortedError with that text instead of the ranks' errors. An exception
  // it throws counts as an answer (its what()). Ranks busy in their own code are not interrupted.
  std::function<std::string()> stop_requested;
};

inline constexpr std::chrono::milliseconds kStopPollPeriod{50};

// Throws ConfigError naming the option, its value and its range when a field of `options` is out
// of the range its row of the options table gives (twinccl/emu/option_table.h: an algorithm name
// the registry knows, a flight recorder path that can be written, ...). run_world checks with it;
// a launcher calls it first, before anything else is prepared (twinccl/emulated_run.h).
void check_options(const EmulatorOptions& options);

// Runs `fn` on options.world_size threads, one communicator each, on one shared world. The first
// rank to fail aborts the world (the others get AbortedError instead of hanging) and its error is
// rethrown here (AbortedError when options.stop_requested stopped the run). Throws ConfigError for
// a world size < 1, ResourceError when a rank thread cannot be created.
void run_world(const EmulatorOptions& options, const RankFunction& fn);

}  // namespace twinccl::emu
