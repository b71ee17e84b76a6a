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
#include <string>
#include <vector>

#include "twinccl/emu/world.h"

namespace twinccl::emu {

struct Posted {
  const void* data = nullptr;
  std::size_t count = 0;     // elements
  int sender = -1;
  bool from_input = false;   // the sender's input buffer (a contribution: scaled when loaded)
  bool consumed = false;     // set by the receiver under the sender's lock
};

class Exchange {
 public:
  Exchange(std::shared_ptr<World> world, int nranks);

  // Queues `message` (which must outlive its consumption) for `receiver`.
  void post(int sender, int receiver, Posted& message);
  // Waits for the oldest message from `sender` to `receiver`, calls use(message), marks it
  // consumed. Throws InternalError when its count differs from `expected_count` (a broken pairing).
  void consume(int receiver, int sender, std::size_t expected_count,
               const std::function<void(const Posted&)>& use, const std::function<std::string()>& what);
  // Takes back a message whose sender is failing: removes it if still queued, else waits until the
  // receiver that took it finished reading. After this the message's memory may be freed.
  void withdraw(int receiver, Posted& message);
  // Waits until the receiver consumed `message`.
  void wait_consumed(int sender, Posted& message, const std::function<std::string()>& what);

 private:
  struct Inbox {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<std::deque<Posted*>> from;  // per sender
  };
  std::shared_ptr<World> world_;
  std::vector<std::unique_ptr<Inbox>> inbox_;  // per rank: messages to it, and its consumption waits
};

}  // namespace twinccl::emu
