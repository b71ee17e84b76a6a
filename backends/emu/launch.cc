// run_emulated: the emulator (emu::run_world) with the simulator's answers plugged in.
//
// How it works. With TWINCCL_TOPOLOGY the emulator's default algorithm is the topology's Tuner
// choice (default_choice.h), so the emulator runs what the replay plays; with TWINCCL_TOPOLOGY or
// TWINCCL_TRACE every rank's world communicator is observed by one trace recorder
// (simulated_time.h), and after a successful run the trace is saved and replayed. The topology is
// loaded before any rank starts: a misspelled preset fails before the program runs.
#include "emu/launch.h"

#include <iostream>
#include <memory>

#include "emu/default_choice.h"
#include "emu/simulated_time.h"
#include "twinccl/emu/emulator.h"

namespace twinccl::emu_backend {

void run_emulated(const RunOptions& options, const RankFunction& fn) {
  emu::EmulatorOptions o;
  o.world_size = options.world_size;
  o.algorithm = options.algorithm;
  if (!options.topology.empty()) {
    auto choice = std::make_shared<const DefaultChoice>(options.topology);
    o.default_algorithm = [choice](const OpDesc& op, const std::vector<int>& world_ranks) {
      return choice->algorithm(op, world_ranks);
    };
  }
  o.timeout_s = options.timeout_s;
  o.schedule_path = options.schedule_path;
  o.channels = options.channels;
  o.chunk_elements = options.chunk_elements;
  o.ranks_per_node = options.ranks_per_node;
  o.check = options.check;
  o.flight_recorder_ops = options.flight_recorder_ops;
  o.flight_recorder_path = options.flight_recorder_path;
  o.fault_hook = options.fault_hook;
  o.p2p_per_peer_streams = options.p2p_per_peer_streams;
  o.max_p2p_lane_threads = options.max_p2p_lane_threads;
  const SimulatedTime simulated(
      options);  // records the run when TWINCCL_TOPOLOGY / TWINCCL_TRACE is set
  if (simulated.recording())
    o.on_rank_start = [&simulated](Communicator& world) { simulated.record(world); };
  emu::run_world(o, fn);
  simulated.report(std::cout);
}

}  // namespace twinccl::emu_backend
