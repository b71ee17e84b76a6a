#include "rendezvous.h"

#include <algorithm>
#include <string>

namespace twinccl::emu {

Meeting::Meeting(std::shared_ptr<World> w, int n)
    : world(std::move(w)),
      nranks(n),
      ops(static_cast<std::size_t>(n)),
      present(static_cast<std::size_t>(n), 0),
      split_args(static_cast<std::size_t>(n)),
      calls(static_cast<std::size_t>(n)) {}

std::string Meeting::label() const {
  return std::string(what_) + " #" + std::to_string(seq_) + " on comm '" + *comm_name_ + "'";
}

void Meeting::reset(std::uint64_t seq, std::string_view what, const std::string* comm_name,
                    const WaitTimeouts* timeouts) {
  seq_ = seq;
  what_ = what;
  comm_name_ = comm_name;
  timeouts_ = timeouts;
  std::fill(present.begin(), present.end(), 0);
  arrived = 0;
  left.store(0, std::memory_order_relaxed);
  done_touching = 0;
  shared.reset();
  broken.clear();
  led = false;
  leader = -1;
  lead_error = nullptr;
  mismatch_error = false;
  shared_buffers = SharedBuffers{};
  stage_.store(gathering, std::memory_order_relaxed);
  sync_count_.store(0, std::memory_order_relaxed);
}

void Meeting::release() {
  for (OpDesc& op : ops) {
    op.send_owner.reset();
    op.recv_owner.reset();
  }
  // Every rank left: nobody touches the exchange. One left with nothing in it (every message
  // consumed, as after any collective that did not fail) and few queues is reused as it is.
  if (exchange_ &&
      !exchange_->idle(kReusedExchangeQueuesPerRank * static_cast<std::size_t>(nranks)))
    exchange_.reset();
  shared.reset();
}

void Meeting::sync(int rank) {
  // Lock-free on the gate, as arrive(): each rank yields a few times, then sleeps on the futex;
  // the last one bumps the generation and wakes them all with one system call. The count's
  // read-modify-writes and the generation's release/acquire order every rank's writes before
  // any rank returns.
  std::uint64_t generation = sync_generation_.load(std::memory_order_acquire);
  if (sync_count_.fetch_add(1, std::memory_order_acq_rel) + 1 == nranks) {
    sync_count_.store(0, std::memory_order_relaxed);
    sync_generation_.fetch_add(1, std::memory_order_acq_rel);
    sync_gate_.open();
    return;
  }
  world->wait(
      sync_gate_, [&] { return sync_generation_.load(std::memory_order_acquire) != generation; },
      [&] {
        return label() + ": rank " + std::to_string(rank) + " waited for the other ranks to finish";
      },
      [] {}, nullptr, bound_of(timeouts_, rank));
}

void Meeting::wait_until_nobody_reads(int rank) {
  // A led meeting was run for everyone by its last rank before the gate opened: nobody reads any
  // rank's buffers any more, and its ranks leave without counting done_touching
  // (Rendezvous::leave), so waiting for them here would never end (a split meeting whose last rank
  // called barrier).
  if (led) return;
  std::unique_lock<std::mutex> lock(mu);
  ++done_touching;
  cv.notify_all();
  // Not World::wait: the world is aborted by now, and the others only finish their current block
  // of work before noticing; they never wait for this rank.
  (void)rank;
  cv.wait(lock, [&] { return done_touching >= nranks; });
}

Rendezvous::Rendezvous(std::shared_ptr<World> world, std::vector<int> global_ranks,
                       std::string comm_name)
    : world_(std::move(world)),
      nranks_(static_cast<int>(global_ranks.size())),
      global_ranks_(std::move(global_ranks)),
      comm_name_(std::move(comm_name)) {}

Meeting* Rendezvous::find_or_open(std::uint64_t seq, std::string_view what) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [s, m] : meetings_) {
    if (s == seq) return m.get();
  }
  std::unique_ptr<Meeting> m;
  if (free_.empty()) {
    m = std::make_unique<Meeting>(world_, nranks_);
  } else {
    m = std::move(free_.back());
    free_.pop_back();
  }
  m->reset(seq, what, &comm_name_, timeouts_);
  meetings_.emplace_back(seq, std::move(m));
  return meetings_.back().second.get();
}

void Rendezvous::recycle(std::uint64_t seq) {
  std::lock_guard<std::mutex> lock(mu_);
  for (std::size_t i = 0; i < meetings_.size(); ++i) {
    if (meetings_[i].first != seq) continue;
    std::unique_ptr<Meeting> m = std::move(meetings_[i].second);
    meetings_.erase(meetings_.begin() + static_cast<std::ptrdiff_t>(i));
    m->release();
    free_.push_back(std::move(m));
    return;
  }
}

Meeting& Rendezvous::arrive(std::uint64_t seq, int rank, const OpDesc& op, std::string_view what,
                            std::pair<int, int> split_arg, const WaitSite* site, Lead lead,
                            RankStaging* staging) {
  world_->check_abort();  // nothing new starts in an aborted world (even if its peers already
                          // arrived)
  std::string_view call = what.empty() ? name(op.kind) : what;
  Meeting* meeting = find_or_open(seq, call);
  std::unique_lock<std::mutex> lock(meeting->mu);
  auto me = [&] {
    return meeting->label() + ": rank " + std::to_string(rank) + " (" +
           describe_call_site(op.where) + ")";
  };
  if (!meeting->broken.empty()) {  // a straggler: the others gave up on this meeting
    abandon(seq, *meeting, lock,
            std::make_exception_ptr(AbortedError(
                me() + " arrived after the others stopped waiting: " + meeting->broken)));
  }
  auto r = static_cast<std::size_t>(rank);
  meeting->ops[r] = op;
  meeting->present[r] = 1;
  meeting->split_args[r] = split_arg;
  meeting->calls[r] = call;
  if (site != nullptr && site->agent != nullptr) site->agent->arrived.store(seq + 1);
  if (++meeting->arrived == nranks_) {  // the last one: everybody's call is known
    if (what.empty())                   // a collective (split has no buffers)
      meeting->shared_buffers = find_shared_buffers(meeting->ops, nranks_, meeting->range_scratch_);
    if (lead != nullptr) {
      meeting->led = true;
      meeting->leader = rank;
    } else if (what.empty() && !meeting->exchange_) {  // a collective that may run a schedule
      meeting->exchange_ = std::make_unique<Exchange>(world_, nranks_);
      meeting->exchange_->bound_by(timeouts_);
    }
    lock.unlock();
    if (lead != nullptr)
      lead(*meeting, staging);  // nobody else touches the meeting until the gate opens
    meeting->stage_.store(Meeting::ready, std::memory_order_release);
    meeting->gate_.open();
    return *meeting;
  }
  lock.unlock();
  auto missing_ranks = [&] {
    std::string missing;
    for (int q = 0; q < nranks_; ++q) {
      if (!meeting->present[static_cast<std::size_t>(q)])
        missing += (missing.empty() ? "" : ", ") + std::to_string(q);
    }
    return missing;
  };
  auto describe = [&] {
    std::lock_guard<std::mutex> guard(meeting->mu);
    return me() + " waited for rank(s) " + missing_ranks() + " to arrive";
  };
  auto hopeless = [&] {
    std::lock_guard<std::mutex> guard(meeting->mu);
    if (meeting->arrived == nranks_) return;
    for (int q = 0; q < nranks_; ++q) {
      int global = global_ranks_[static_cast<std::size_t>(q)];
      if (!meeting->present[static_cast<std::size_t>(q)] && world_->finished(global)) {
        throw AbortedError(me() + " waits for rank " + std::to_string(q) +
                           ", whose function already returned without calling it" +
                           world_->returned_note(global));
      }
      if (!meeting->present[static_cast<std::size_t>(q)] && departures_ != nullptr &&
          departures_->left(q)) {
        throw AbortedError(me() + " waits for rank " + std::to_string(q) +
                           ", which destroyed its communicator '" + comm_name_ +
                           "' without calling it (a split communicator one rank dropped while "
                           "its peers still use it)" +
                           world_->returned_note(global));
      }
    }
  };
  try {
    world_->wait(
        meeting->gate_,
        [&] { return meeting->stage_.load(std::memory_order_acquire) != Meeting::gathering; },
        describe, hopeless, site, bound_of(timeouts_, rank));
  } catch (const std::exception& e) {
    lock.lock();
    if (meeting->arrived < nranks_) {
      // This rank gives up: the meeting can never complete, so nobody may wait in it any longer.
      meeting->broken = "rank " + std::to_string(rank) + " failed: " + e.what();
      meeting->stage_.store(Meeting::given_up, std::memory_order_release);
      meeting->gate_.open();
      abandon(seq, *meeting, lock, std::current_exception());
    }
    // Too late to give up: every rank arrived and the collective runs with this rank's buffers,
    // so it takes part. A led one is finished by the leader without waiting for anybody: bounded.
    lock.unlock();
    while (meeting->led) {
      std::uint32_t seen = meeting->gate_.value();
      if (meeting->stage_.load(std::memory_order_acquire) != Meeting::gathering) break;
      meeting->gate_.wait(seen, World::kPollPeriod);
    }
    return *meeting;
  }
  if (meeting->stage_.load(std::memory_order_acquire) != Meeting::ready) {  // another rank gave up
    lock.lock();
    abandon(seq, *meeting, lock,
            std::make_exception_ptr(AbortedError(me() + " stops waiting: " + meeting->broken)));
  }
  return *meeting;
}

void Rendezvous::abandon(std::uint64_t seq, Meeting& meeting, std::unique_lock<std::mutex>& lock,
                         std::exception_ptr error) {
  ++meeting.done_touching;
  meeting.cv.notify_all();
  lock.unlock();
  if (meeting.left.fetch_add(1, std::memory_order_acq_rel) + 1 == nranks_) recycle(seq);
  std::rethrow_exception(error);
}

void Rendezvous::leave(std::uint64_t seq, Meeting& meeting) {
  if (!meeting.led) {  // ranks failing in the collective wait in wait_until_nobody_reads
    std::lock_guard<std::mutex> lock(meeting.mu);
    ++meeting.done_touching;
    meeting.cv.notify_all();
  }
  if (meeting.left.fetch_add(1, std::memory_order_acq_rel) + 1 == nranks_) recycle(seq);
}

}  // namespace twinccl::emu
