// Pull-model point-to-point exchange between the ranks of one communicator.
//
// A sender posts a pointer to its data and waits until the receiver consumed it; the receiver
// reads the sender's memory directly (one copy, as NCCL's P2P over NVLink reads peer memory).
// Posts from one sender to one receiver are consumed in FIFO order.
//
//   Exchange ex(world, nranks);
//   Posted p{.data = buf, .count = n};  ex.post(me, peer, p);     // sender
//   ex.consume(me, peer, n, [&](const Posted& m) { copy(m.data); }); // receiver
//   ex.wait_consumed(me, p);                                        // sender
//
// User send/recv keep the pairing even when a rank fails: every send op yields exactly one
// message and every recv op takes exactly one. A send that fails leaves a tombstone in its place
// (the recv that takes it throws AbortedError with the sender's cause); a recv that fails before
// taking its message refuses the sender's next message (that send throws AbortedError with the
// receiver's cause). So the other ranks of a failed group learn the real cause at once, and a
// straggler's late send meets the refusal its timed-out peer left, instead of waiting forever.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "departures.h"
#include "twinccl/data_type.h"
#include "world.h"

namespace twinccl::emu {

struct Posted {
  const void* data = nullptr;
  std::size_t count = 0;  // elements
  int sender = -1;
  int receiver = -1;
  bool from_input = false;  // the sender's input buffer (a contribution: scaled when loaded)
  bool consumed = false;    // set by the receiver under the sender's lock
  // User send/recv only: checked against the matching recv.
  std::optional<DataType> dtype;
  std::source_location where;
  std::string_view part_of;  // a convenience call's name and this buffer's name there (messages)
  std::string_view role;
  std::string mismatch;  // set by the receiver when the pair disagrees: the sender throws it too
  std::string refused;   // set by the receiver whose recv failed: the sender throws AbortedError
  std::string shared;    // set by the receiver whose buffer overlaps this one: InvalidArgument
  std::string failed;    // a tombstone: the send failed on its rank; the recv throws AbortedError
};

// What the receiving side of a user send/recv expects, for the pairing check.
struct Expected {
  std::size_t count = 0;
  DataType dtype = DataType::uint8;
  std::source_location where;
  std::string_view comm;
  std::string_view part_of;
  std::string_view role;
  const void* recv = nullptr;  // the recv's buffer: one overlapping the send's is refused
};

// The messages from one sender to one receiver, oldest first. A vector read from `head_`: once
// drained (as after every step of a schedule) it starts over in the same storage, so a warm queue
// allocates nothing (a std::deque frees and allocates a node every 64 messages).
class PostQueue {
 public:
  using iterator = std::vector<Posted*>::iterator;
  bool empty() const { return head_ == items_.size(); }
  Posted* front() const { return items_[head_]; }
  void push_back(Posted* message) { items_.push_back(message); }
  void pop_front() {
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= kCompactAfter && 2 * head_ >= items_.size()) {  // never drained: compact
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }
  iterator begin() { return items_.begin() + static_cast<std::ptrdiff_t>(head_); }
  iterator end() { return items_.end(); }
  void erase(iterator it) { items_.erase(it); }

 private:
  static constexpr std::size_t kCompactAfter = 64;
  std::vector<Posted*> items_;
  std::size_t head_ = 0;
};

class Exchange {
 public:
  Exchange(std::shared_ptr<World> world, int nranks);
  // User send/recv of a communicator: its name and world ranks (a wait on a rank whose function
  // returned fails at once), and the checker to tell about every post and consumption.
  void describe(std::string comm_name, std::vector<int> global_ranks) {
    comm_name_ = std::move(comm_name);
    global_ranks_ = std::move(global_ranks);
  }
  void watch(Checker* checker, CommRecord* comm) {
    checker_ = checker;
    comm_ = comm;
  }
  // Ranks that destroyed their copy of the communicator (a split's): a wait on one fails at once.
  void watch_departures(const Departures* departures) { departures_ = departures; }
  // The ranks' own wait timeouts (the communicator's; nullptr or unset: the world's).
  void bound_by(const WaitTimeouts* timeouts) { timeouts_ = timeouts; }

  // Queues `message` (which must outlive its consumption) for `receiver`. Returns its number on
  // the pair (1-based) when the checker watches this exchange, else 0.
  std::uint64_t post(int sender, int receiver, Posted& message);
  // Waits for the oldest message from `sender` to `receiver`, calls use(message), marks it
  // consumed. Throws InternalError when its count differs from `expected_count` (a broken pairing).
  void consume(int receiver, int sender, std::size_t expected_count,
               const std::function<void(const Posted&)>& use,
               const std::function<std::string()>& what);
  // User recv: the pairing check is a MismatchError (count or dtype) thrown on both sides, a recv
  // buffer overlapping another rank's send buffer an InvalidArgument on both sides. A
  // tombstone throws AbortedError; a wait that fails refuses the sender's next message.
  void consume(int receiver, int sender, const Expected& expected,
               const std::function<void(const Posted&)>& use,
               const std::function<std::string()>& what, const WaitSite* site);
  // Takes back a message whose sender is failing: removes it if still queued, else waits until the
  // receiver that took it finished reading. After this the message's memory may be freed.
  void withdraw(int receiver, Posted& message);
  // User send whose rank failed with `cause` ("rank 1 failed: ..."): a message still queued
  // becomes a tombstone; one being read is waited for; one consumed stays consumed.
  void fail_posted(int receiver, Posted& message, const std::string& cause);
  // User send that failed before it was posted: queues a tombstone in its place.
  void post_failed(int sender, int receiver, std::source_location where, const std::string& cause);
  // User recv that failed before it took its message: the sender's next message is refused.
  void refuse(int receiver, int sender, std::source_location where, const std::string& cause);
  // Nothing queued, refused or tombstoned, and at most `max_queues` per-sender queues made: the
  // exchange may serve another collective as it is (Meeting::release, once every rank left).
  bool idle(std::size_t max_queues);
  // Waits until the receiver consumed `message`; throws MismatchError when the receiver found the
  // pair disagreeing, InvalidArgument when their buffers overlap, AbortedError when it refused.
  void wait_consumed(int sender, Posted& message, const std::function<std::string()>& what,
                     const WaitSite* site = nullptr);

 private:
  struct Refusal {
    std::source_location where;  // the recv that failed
    std::string cause;
  };
  struct Inbox {
    std::mutex mu;
    std::condition_variable cv;
    // Per sender, made when first used (references stay valid: nothing is erased). A vector of
    // n queues per inbox made 2n^2 deques per exchange, ~600 bytes each when made: 20 GB and
    // over a minute for a 4096-rank world before any rank ran.
    std::unordered_map<int, PostQueue> from;
    std::unordered_map<int, std::deque<Refusal>> refused;  // recvs that failed before taking
    std::list<Posted> tombstones;  // owned here; queued in `from` like any message
  };
  // The oldest message from `sender`, or throws (wait failed). A tombstone is returned as a copy
  // in `tombstone` (its storage freed) with nullptr.
  Posted* take(int receiver, int sender, const std::function<std::string()>& what,
               const WaitSite* site, std::optional<Posted>* tombstone);
  void mark_consumed(int sender, Posted& message);
  // use(message), then mark_consumed, also when `use` throws (the sender is let go either way).
  void use_then_consume(int sender, Posted& message, const std::function<void(const Posted&)>& use);
  // Under the inbox lock of `receiver`: a refused message is consumed at once.
  void refuse_locked(Posted& message, const Refusal& refusal);
  std::string rank_text(int comm_rank) const;
  std::shared_ptr<World> world_;
  Checker* checker_ = nullptr;
  CommRecord* comm_ = nullptr;
  std::string comm_name_;
  std::vector<int> global_ranks_;  // empty: no finished-peer checks (a collective's own traffic)
  const Departures* departures_ = nullptr;
  const WaitTimeouts* timeouts_ = nullptr;
  std::vector<std::unique_ptr<Inbox>>
      inbox_;  // per rank: messages to it, and its consumption waits
};

}  // namespace twinccl::emu
