// The emulator's default algorithm (default_choice.h).
//
// How it works. One Tuner per communicator (its world ranks as the topology's GPUs), built at the
// communicator's first collective and kept for the run, as NCCL tunes once per communicator. A
// call asks it with the call's kind, count, dtype and root; nvls_tree maps to "hierarchical",
// which the emulator executes and the replay plays for it. Without a topology, or where the
// tuner cannot place the call (more ranks than GPUs, uneven counts), ring-else-direct as before:
// the replay refuses a trace with more ranks than GPUs anyway.
#include "emu/default_choice.h"

#include "twinccl/algorithms.h"
#include "twinccl/errors.h"
#include "twinccl/run.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::emu_backend {

DefaultChoice::DefaultChoice(const std::string& topology)
    : topology_(std::make_unique<const topo::Topology>(topo::load_topology(topology))) {}

const sim::Tuner& DefaultChoice::tuner(const std::vector<int>& world_ranks) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = tuners_[world_ranks];
  if (!slot) slot = std::make_unique<sim::Tuner>(*topology_, world_ranks);
  return *slot;
}

std::string DefaultChoice::algorithm(const OpDesc& op, const std::vector<int>& world_ranks) const {
  const std::string fallback(default_algorithm(op.kind));
  const int n = static_cast<int>(world_ranks.size());
  if (op.kind == OpKind::barrier || is_p2p(op.kind) || is_uneven(op.kind) ||
      op.kind == OpKind::all_to_all_v) {
    return fallback;
  }
  for (int r : world_ranks) {
    if (r >= topology_->gpu_count()) return fallback;
  }
  sim::TunerCall call;
  call.spec.kind = op.kind;
  call.spec.nranks = n;
  call.spec.count = op.count;
  call.spec.root = std::max(0, op.root);
  call.dtype = op.dtype;
  return std::string(sim::schedule_for(tuner(world_ranks).choose(call).algorithm));
}

}  // namespace twinccl::emu_backend

namespace twinccl {

std::string emulator_default_algorithm(const OpDesc& op, int world_size,
                                       const std::string& topology) {
  if (topology.empty()) return std::string(default_algorithm(op.kind));
  std::vector<int> ranks;
  for (int r = 0; r < world_size; ++r) ranks.push_back(r);
  return emu_backend::DefaultChoice(topology).algorithm(op, ranks);
}

}  // namespace twinccl
