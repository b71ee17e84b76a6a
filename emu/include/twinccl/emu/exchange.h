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
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "twinccl/data_type.h"
#include "twinccl/emu/world.h"

namespace twinccl::emu {

struct Posted {
  const void* data = nullptr;
  std::size_t count = 0;     // elements
  int sender = -1;
  bool from_input = false;   // the sender's input buffer (a contribution: scaled when loaded)
  bool consumed = false;     // set by the receiver under the sender's lock
  // User send/recv only: checked against the matching recv.
  std::optional<DataType> dtype;
  std::source_location where;
  std::string mismatch;      // set by the receiver when the pair disagrees: the sender throws it too
};

// What the receiving side of a user send/recv expects, for the pairing check.
struct Expected {
  std::size_t count = 0;
  DataType dtype = DataType::uint8;
  std::source_location where;
  std::string_view comm;
};

class Exchange {
 public:
  Exchange(std::shared_ptr<World> world, int nranks);
  // User send/recv of a communicator: tell the checker about every post and consumption.
  void watch(Checker* checker, CommRecord* comm) {
    checker_ = checker;
    comm_ = comm;
  }

  // Queues `message` (which must outlive its consumption) for `receiver`. Returns its number on
  // the pair (1-based) when the checker watches this exchange, else 0.
  std::uint64_t post(int sender, int receiver, Posted& message);
  // Waits for the oldest message from `sender` to `receiver`, calls use(message), marks it
  // consumed. Throws InternalError when its count differs from `expected_count` (a broken pairing).
  void consume(int receiver, int sender, std::size_t expected_count,
               const std::function<void(const Posted&)>& use, const std::function<std::string()>& what);
  // User recv: the pairing check is a MismatchError (count or dtype) thrown on both sides.
  void consume(int receiver, int sender, const Expected& expected, const std::function<void(const Posted&)>& use,
               const std::function<std::string()>& what, const WaitSite* site);
  // Takes back a message whose sender is failing: removes it if still queued, else waits until the
  // receiver that took it finished reading. After this the message's memory may be freed.
  void withdraw(int receiver, Posted& message);
  // Waits until the receiver consumed `message`; throws MismatchError when the receiver found the
  // pair disagreeing.
  void wait_consumed(int sender, Posted& message, const std::function<std::string()>& what,
                     const WaitSite* site = nullptr);

 private:
  struct Inbox {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::deque<Posted*>> from;  // per sender
  };
  Posted* take(int receiver, int sender, const std::function<std::string()>& what, const WaitSite* site);
  void mark_consumed(int sender, Posted& message);
  std::shared_ptr<World> world_;
  Checker* checker_ = nullptr;
  CommRecord* comm_ = nullptr;
  std::vector<std::unique_ptr<Inbox>> inbox_;  // per rank: messages to it, and its consumption waits
};

}  // namespace twinccl::emu
