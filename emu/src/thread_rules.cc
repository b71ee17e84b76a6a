// EmuCommunicator's rules about threads (docs/misuse.md 64, 67): one thread at a time per
// communicator (single_user.h), and a rank's thread calls only that rank's communicators. (A group
// belongs to the thread that opened it, as NCCL's: the Communicator base class, for every backend.)
#include <string>

#include "communicator.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::emu {

void EmuCommunicator::refuse_second_thread(const std::string& text) noexcept {
  shared_->world->note_failure(global_rank(), text);
  shared_->world->abort(text);
}

void EmuCommunicator::refuse_other_ranks_thread(std::string_view op, Where where) {
  const emu::RankThread& caller = emu::this_rank_thread();
  if (caller.world != shared_->world.get() || caller.global_rank == global_rank()) return;
  std::string text = call_site_text(op, name(), rank_, where) + ": called on the thread of " +
                     "world rank " + std::to_string(caller.global_rank) +
                     ", but this communicator belongs to world rank " +
                     std::to_string(global_rank()) +
                     "; each rank makes its calls on its own communicators (the one run() passed "
                     "to its function, and the ones its split() calls returned), not on one "
                     "reached through shared state (a global, a capture by reference)";
  shared_->world->note_failure(caller.global_rank, text);
  throw InvalidArgument(text);
}

}  // namespace twinccl::emu
