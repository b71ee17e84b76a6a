#include "rendezvous.h"

#include <string>

namespace twinccl::emu {

Meeting::Meeting(std::shared_ptr<World> w, int n, std::string l)
    : world(std::move(w)), nranks(n), label(std::move(l)), ops(static_cast<std::size_t>(n)), present(static_cast<std::size_t>(n), 0),
      split_args(static_cast<std::size_t>(n)),
      calls(static_cast<std::size_t>(n)),
      exchange(world, n) {}

void Meeting::sync(int rank) {
  std::unique_lock<std::mutex> lock(mu);
  std::uint64_t generation = sync_generation_;
  if (++sync_count_ == nranks) {
    sync_count_ = 0;
    ++sync_generation_;
    lock.unlock();
    cv.notify_all();
    return;
  }
  world->wait(lock, cv, [&] { return sync_generation_ != generation; },
              [&] { return label + ": rank " + std::to_string(rank) + " waited for the other ranks to finish"; });
}

void Meeting::wait_until_nobody_reads(int rank) {
  std::unique_lock<std::mutex> lock(mu);
  ++done_touching;
  cv.notify_all();
  // Not World::wait: the world is aborted by now, and the others only finish their current block
  // of work before noticing; they never wait for this rank.
  (void)rank;
  cv.wait(lock, [&] { return done_touching >= nranks; });
}

Rendezvous::Rendezvous(std::shared_ptr<World> world, std::vector<int> global_ranks, std::string comm_name)
    : world_(std::move(world)),
      nranks_(static_cast<int>(global_ranks.size())),
      global_ranks_(std::move(global_ranks)),
      comm_name_(std::move(comm_name)) {}

Meeting& Rendezvous::arrive(std::uint64_t seq, int rank, const OpDesc& op, std::string_view what,
                            std::pair<int, int> split_arg, const WaitSite* site) {
  world_->check_abort();  // nothing new starts in an aborted world (even if its peers already arrived)
  Meeting* meeting = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = meetings_[seq];
    if (!slot) {
      slot = std::make_unique<Meeting>(world_, nranks_,
                                       std::string(what.empty() ? name(op.kind) : what) + " #" +
                                           std::to_string(seq) + " on comm '" + comm_name_ + "'");
    }
    meeting = slot.get();
  }
  std::unique_lock<std::mutex> lock(meeting->mu);
  auto me = [&] { return meeting->label + ": rank " + std::to_string(rank) + " (" + describe_call_site(op.where) + ")"; };
  if (!meeting->broken.empty()) {  // a straggler: the others gave up on this meeting
    abandon(seq, *meeting, lock,
            std::make_exception_ptr(AbortedError(me() + " arrived after the others stopped waiting: " + meeting->broken)));
  }
  meeting->ops[static_cast<std::size_t>(rank)] = op;
  meeting->present[static_cast<std::size_t>(rank)] = 1;
  meeting->split_args[static_cast<std::size_t>(rank)] = split_arg;
  meeting->calls[static_cast<std::size_t>(rank)] = what.empty() ? name(op.kind) : what;
  if (site != nullptr && site->agent != nullptr) site->agent->arrived.store(seq + 1);
  if (++meeting->arrived == nranks_) {
    lock.unlock();
    meeting->cv.notify_all();
    lock.lock();
  }
  auto missing_ranks = [&] {
    std::string missing;
    for (int r = 0; r < nranks_; ++r) {
      if (!meeting->present[static_cast<std::size_t>(r)]) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
    }
    return missing;
  };
  auto describe = [&] { return me() + " waited for rank(s) " + missing_ranks() + " to arrive"; };
  auto hopeless = [&] {
    for (int r = 0; r < nranks_; ++r) {
      int global = global_ranks_[static_cast<std::size_t>(r)];
      if (!meeting->present[static_cast<std::size_t>(r)] && world_->finished(global)) {
        throw AbortedError(me() + " waits for rank " + std::to_string(r) +
                           ", whose function already returned without calling it" + world_->returned_note(global));
      }
    }
  };
  try {
    world_->wait(lock, meeting->cv, [&] { return meeting->arrived == nranks_ || !meeting->broken.empty(); },
                 describe, hopeless, site);
  } catch (const std::exception& e) {
    // This rank gives up: the meeting can never complete, so nobody may wait in it any longer.
    meeting->broken = "rank " + std::to_string(rank) + " failed: " + e.what();
    meeting->cv.notify_all();
    abandon(seq, *meeting, lock, std::current_exception());
  }
  if (meeting->arrived < nranks_) {  // woken because another rank gave up
    abandon(seq, *meeting, lock, std::make_exception_ptr(AbortedError(me() + " stops waiting: " + meeting->broken)));
  }
  return *meeting;
}

void Rendezvous::abandon(std::uint64_t seq, Meeting& meeting, std::unique_lock<std::mutex>& lock,
                         std::exception_ptr error) {
  bool last = ++meeting.left == nranks_;
  ++meeting.done_touching;
  lock.unlock();
  if (last) {
    std::lock_guard<std::mutex> rdv_lock(mu_);
    meetings_.erase(seq);
  }
  std::rethrow_exception(error);
}

void Rendezvous::leave(std::uint64_t seq, Meeting& meeting) {
  bool last = false;
  {
    std::lock_guard<std::mutex> lock(meeting.mu);
    last = ++meeting.left == nranks_;
    ++meeting.done_touching;
    // Under the lock: once it is released the last rank may free the meeting.
    if (!last) meeting.cv.notify_all();
  }
  if (last) {
    std::lock_guard<std::mutex> lock(mu_);
    meetings_.erase(seq);
  }
}

}  // namespace twinccl::emu
