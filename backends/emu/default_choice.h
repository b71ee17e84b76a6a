// The emulator's default algorithm (none forced by the call or TWINCCL_ALGO): with a topology
// (TWINCCL_TOPOLOGY), the one Tuner of the communicator's GPUs (sim/tuner.h), so the emulator runs
// what the simulated time of the run (the replay) plays; without, ring where it exists, else
// direct.
//
//   DefaultChoice choice(options.topology);                  // launch.cc, once per run
//   std::string a = choice.algorithm(op, world_ranks);       // the emulator asks, per call
//
// It lives with the backends (which link sim), handed to the emulator as its AlgorithmChooser
// (twinccl/emu/emulator.h): emu itself knows nothing of sim.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "twinccl/operation.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::emu_backend {

class DefaultChoice {
 public:
  // A preset name or topology file, as TWINCCL_TOPOLOGY (loaded once).
  explicit DefaultChoice(const std::string& topology);
  // The schedule the emulator runs for `op` on a communicator of these world ranks (rank r on the
  // topology's GPU r, as the replay places them): the tuner's algorithm, nvls_tree as
  // "hierarchical" (the schedule the replay plays for it). Communicators with more ranks than
  // the topology has GPUs, and uneven collectives, get ring-else-direct.
  std::string algorithm(const OpDesc& op, const std::vector<int>& world_ranks) const;

 private:
  const sim::Tuner& tuner(const std::vector<int>& world_ranks) const;
  std::unique_ptr<const topo::Topology> topology_;
  mutable std::mutex mu_;  // rank threads ask at once
  mutable std::map<std::vector<int>, std::unique_ptr<sim::Tuner>> tuners_;  // once per comm
};

}  // namespace twinccl::emu_backend
