// Rendezvous: ranks of one communicator meet at each collective (by sequence number), see every
// rank's call, then run it. A Meeting also gives the ranks a barrier and per-op shared state.
//
//   Meeting& m = rdv.arrive(seq, rank, my_op);    // returns once all ranks arrived
//   const OpDesc& theirs = m.ops[peer];            // valid until the last rank leaves
//   m.sync(rank);                                  // barrier among the ranks of this meeting
//   rdv.leave(seq, m);                             // the last rank to leave recycles it
//
// How it works: ranks that arrive early sleep on the meeting's Gate (a futex: no lock held, one
// system call wakes them all). With a `lead` function (small collectives), the last rank to
// arrive runs it for everyone (every buffer is in this address space) before opening the gate,
// so each rank sleeps and wakes once per collective. Meetings are recycled through a free list:
// once warm, a collective allocates nothing here.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "departures.h"
#include "exchange.h"
#include "gate.h"
#include "shared_buffers.h"
#include "twinccl/operation.h"
#include "world.h"

namespace twinccl::emu {

struct RankStaging;  // schedule_cache.h

struct Meeting {
  Meeting(std::shared_ptr<World> world, int nranks);
  std::shared_ptr<World> world;
  int nranks;
  // "all_reduce #12 on comm 'world'", for messages (built on demand).
  std::string label() const;
  std::vector<OpDesc> ops;    // per rank (copies), valid until the last rank leaves
  std::vector<char> present;  // which ranks arrived
  std::vector<std::pair<int, int>> split_args;  // split(): (color, key) per rank
  std::vector<std::string_view> calls;          // per rank: "split" or the op's name (a literal)
  int arrived = 0;
  std::atomic<int> left{0};
  int done_touching = 0;  // ranks that left or are failing: no longer read peers' memory
  std::mutex mu;
  std::condition_variable cv;
  // Point-to-point traffic of this collective's schedule (made by the last rank to arrive,
  // unless the meeting is led; kept for the meeting's next use when left clean and small).
  Exchange& exchange() const { return *exchange_; }
  std::shared_ptr<void> shared;  // built once by the first rank that needs it (under mu)
  // Set when a rank gave up waiting for the others to arrive (timeout, deadlock, a peer that
  // returned): the meeting can never complete, so every rank waiting in it, and every rank that
  // arrives later, throws AbortedError with this reason at once.
  std::string broken;
  // A led meeting: the last rank to arrive (`leader`) ran the collective for every rank;
  // lead_error is what it threw (mismatch_error: a MismatchError every rank throws).
  bool led = false;
  int leader = -1;
  std::exception_ptr lead_error;
  bool mismatch_error = false;
  // Two ranks' buffers overlap (one writes what the other reads or writes): found once by the
  // last rank to arrive, before anything ran; spec_from_meeting() throws it on every rank.
  SharedBuffers shared_buffers;
  // Barrier among the meeting's ranks (reusable).
  void sync(int rank);
  // A rank that fails after every rank arrived calls this before unwinding: it waits until no
  // other rank can still be reading its buffers (they all left or are failing too).
  void wait_until_nobody_reads(int rank);

 private:
  friend class Rendezvous;
  enum Stage : int { gathering, ready, given_up };
  void reset(std::uint64_t seq, std::string_view what, const std::string* comm_name,
             const WaitTimeouts* timeouts);
  void release();  // drops the ops' buffer owners and the exchange once every rank left
  std::atomic<int> stage_{gathering};
  Gate gate_;
  std::uint64_t seq_ = 0;
  std::string_view what_;
  const std::string* comm_name_ = nullptr;
  const WaitTimeouts* timeouts_ = nullptr;  // the communicator's (nullptr: the world's timeout)
  std::unique_ptr<Exchange> exchange_;
  // An exchange with more per-sender queues than this times nranks is not kept (a direct
  // all_to_all schedule makes n per rank: n^2 queues of ~600 bytes).
  static constexpr std::size_t kReusedExchangeQueuesPerRank = 4;
  std::vector<ByteRange> range_scratch_;  // find_shared_buffers' (kept warm across reuses)
  std::atomic<int> sync_count_{0};        // sync(): ranks in the current round
  std::atomic<std::uint64_t> sync_generation_{0};
  Gate sync_gate_;
};

class Rendezvous {
 public:
  // global_ranks[r]: the world rank of this communicator's rank r.
  Rendezvous(std::shared_ptr<World> world, std::vector<int> global_ranks, std::string comm_name);

  // Blocks until all ranks arrived at collective `seq`. Throws TimeoutError naming missing ranks,
  // and AbortedError at once when a missing rank's function already returned (with the error it
  // failed with, if any) or another rank gave up on this meeting (with its reason).
  // `what` names the operation in messages (default: the op kind; must outlive the meeting).
  // `site` (optional) tells the checker who waits, and marks the arrival.
  // `lead` (optional): run by the last rank to arrive, for every rank, before the others wake
  // (what it throws is kept in the meeting's lead_error; it aborts the world for other errors),
  // with that rank's `staging` (its working memory: schedule_cache.h).
  using Lead = void (*)(Meeting&, RankStaging*);
  Meeting& arrive(std::uint64_t seq, int rank, const OpDesc& op, std::string_view what = {},
                  std::pair<int, int> split_arg = {}, const WaitSite* site = nullptr,
                  Lead lead = nullptr, RankStaging* staging = nullptr);
  void leave(std::uint64_t seq, Meeting& meeting);
  // Ranks that destroyed their copy of the communicator (a split's): a wait on one fails at once.
  void watch_departures(const Departures* departures) { departures_ = departures; }
  // The ranks' own wait timeouts (the communicator's; unset: the world's).
  void bound_by(const WaitTimeouts* timeouts) { timeouts_ = timeouts; }

 private:
  // This rank is done with a meeting it never ran (it gave up, or the meeting was broken):
  // counts it as left, frees the meeting when it was the last, and throws `error`.
  [[noreturn]] void abandon(std::uint64_t seq, Meeting& meeting, std::unique_lock<std::mutex>& lock,
                            std::exception_ptr error);
  std::shared_ptr<World> world_;
  int nranks_;
  std::vector<int> global_ranks_;
  std::string comm_name_;
  const Departures* departures_ = nullptr;
  const WaitTimeouts* timeouts_ = nullptr;
  Meeting* find_or_open(std::uint64_t seq, std::string_view what);
  void recycle(std::uint64_t seq);
  std::mutex mu_;
  std::vector<std::pair<std::uint64_t, std::unique_ptr<Meeting>>> meetings_;  // open ones (a few)
  std::vector<std::unique_ptr<Meeting>> free_;
};

}  // namespace twinccl::emu
