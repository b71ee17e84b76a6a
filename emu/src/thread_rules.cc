// EmuCommunicator's rules about threads (docs/misuse.md 64, 66, 67): one thread at a time per
// communicator (single_user.h), a group belongs to the thread that opened it (as NCCL's), and a
// rank's thread calls only that rank's communicators.
#include <string>

#include "communicator.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::emu {
namespace {

// The group this thread has open. NCCL's groups belong to a thread, not to a communicator
// (ncclGroupStart takes none): the NCCL backend refuses a call on another communicator while one
// is open (backends/nccl/ordering.cc), and so does the emulator, in the same words, so that a
// program relying on a group to cover two communicators fails on the laptop too.
struct ThreadGroup {
  const EmuCommunicator* owner = nullptr;  // compared, never used (it may be gone)
  std::string owner_name;                  // a copy: reused capacity, no allocation once warm
  Where where;
};
thread_local ThreadGroup t_group;

}  // namespace

void EmuCommunicator::note_thread_group() noexcept {
  if (group_depth_ > 0) {
    if (t_group.owner == this) return;
    t_group.owner = this;
    t_group.where = group_where_;
    try {
      t_group.owner_name.assign(name());
    } catch (...) {  // out of memory: the message names no communicator
      t_group.owner_name.clear();
    }
  } else if (t_group.owner == this) {
    t_group.owner = nullptr;
  }
}

void EmuCommunicator::forget_thread_group() noexcept {
  if (t_group.owner == this) t_group.owner = nullptr;
}

void EmuCommunicator::refuse_if_group_of_other(std::string_view op, Where where) {
  if (t_group.owner == nullptr || t_group.owner == this) return;
  std::string text = call_site_text(op, name(), rank_, where) +
                     ": this thread has a group open on comm '" + t_group.owner_name +
                     "' (group_start at " + describe_call_site(t_group.where) +
                     "); NCCL groups belong to a thread, so end that group first (group_end) "
                     "before using another communicator";
  shared_->world->note_failure(global_rank(), text);
  throw InvalidArgument(text);
}

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
