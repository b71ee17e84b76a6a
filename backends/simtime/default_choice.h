// The emulator's default algorithm (none forced by the call or TWINCCL_ALGO): the one selection
// policy (sim/selection.h) on the run's topology (TWINCCL_TOPOLOGY), so the emulator runs what the
// simulated time of the run (the replay) plays. Without a topology there is none: the emulator
// keeps its own default (ring where it exists, else direct).
//
//   DefaultChoice choice(topology);                          // register.cc, once per run
//   std::string a = choice.algorithm(op, world_ranks);       // the emulator asks, per call
//
// It lives in TwinCCL::simtime (which links sim), handed to the emulator as its AlgorithmChooser
// (twinccl/emu/emulator.h): emu itself knows nothing of sim.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "twinccl/operation.h"
#include "twinccl/sim/selection.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::emu_backend {

class DefaultChoice {
 public:
  // The loaded topology object (never loaded again by name).
  explicit DefaultChoice(std::shared_ptr<const topo::Topology> topology);
  // The schedule the emulator runs for `op` on a communicator of these world ranks (rank r on the
  // topology's GPU r, as the replay places them): the policy's decision's schedule.
  std::string algorithm(const OpDesc& op, const std::vector<int>& world_ranks) const;

 private:
  sim::SelectionPolicy policy_;
};

}  // namespace twinccl::emu_backend
