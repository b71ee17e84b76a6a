// The emulator's default algorithm (default_choice.h): the selection policy's schedule, which the
// emulator executes and the replay plays for the same call.
#include "simtime/default_choice.h"

namespace twinccl::emu_backend {

DefaultChoice::DefaultChoice(std::shared_ptr<const topo::Topology> topology)
    : policy_(std::move(topology)) {}

std::string DefaultChoice::algorithm(const OpDesc& op, const std::vector<int>& world_ranks) const {
  return policy_.resolve(op, world_ranks).schedule;
}

}  // namespace twinccl::emu_backend
