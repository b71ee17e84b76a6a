#include "twinccl/emu/exchange.h"

#include <string>

namespace twinccl::emu {

Exchange::Exchange(std::shared_ptr<World> world, int nranks) : world_(std::move(world)) {
  inbox_.reserve(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    auto box = std::make_unique<Inbox>();
    box->from.resize(static_cast<std::size_t>(nranks));
    inbox_.push_back(std::move(box));
  }
}

void Exchange::post(int sender, int receiver, Posted& message) {
  message.sender = sender;
  message.consumed = false;
  Inbox& box = *inbox_[static_cast<std::size_t>(receiver)];
  {
    std::lock_guard<std::mutex> lock(box.mu);
    box.from[static_cast<std::size_t>(sender)].push_back(&message);
  }
  box.cv.notify_all();
}

void Exchange::consume(int receiver, int sender, std::size_t expected_count,
                       const std::function<void(const Posted&)>& use, const std::function<std::string()>& what) {
  Inbox& box = *inbox_[static_cast<std::size_t>(receiver)];
  Posted* message = nullptr;
  {
    std::unique_lock<std::mutex> lock(box.mu);
    auto& queue = box.from[static_cast<std::size_t>(sender)];
    world_->wait(lock, box.cv, [&] { return !queue.empty(); }, what);
    world_->check_abort();
    message = queue.front();
    queue.pop_front();
  }
  if (message->count != expected_count) {
    // Unblock the sender before reporting; the pairing is broken for both sides.
    Inbox& sbox = *inbox_[static_cast<std::size_t>(sender)];
    {
      std::lock_guard<std::mutex> lock(sbox.mu);
      message->consumed = true;
    }
    sbox.cv.notify_all();
    throw InternalError(what() + ": rank " + std::to_string(sender) + " sent " + std::to_string(message->count) +
                        " elements, rank " + std::to_string(receiver) + " expected " + std::to_string(expected_count));
  }
  try {
    use(*message);
  } catch (...) {
    Inbox& sbox = *inbox_[static_cast<std::size_t>(sender)];
    {
      std::lock_guard<std::mutex> lock(sbox.mu);
      message->consumed = true;
    }
    sbox.cv.notify_all();
    throw;
  }
  Inbox& sbox = *inbox_[static_cast<std::size_t>(sender)];
  {
    std::lock_guard<std::mutex> lock(sbox.mu);
    message->consumed = true;
  }
  sbox.cv.notify_all();
}

void Exchange::withdraw(int receiver, Posted& message) {
  {
    Inbox& box = *inbox_[static_cast<std::size_t>(receiver)];
    std::lock_guard<std::mutex> lock(box.mu);
    auto& queue = box.from[static_cast<std::size_t>(message.sender)];
    for (auto it = queue.begin(); it != queue.end(); ++it) {
      if (*it == &message) {
        queue.erase(it);
        return;
      }
    }
  }
  // Taken by the receiver: it marks the message consumed whatever happens while reading it.
  Inbox& own = *inbox_[static_cast<std::size_t>(message.sender)];
  std::unique_lock<std::mutex> lock(own.mu);
  own.cv.wait(lock, [&] { return message.consumed; });
}

void Exchange::wait_consumed(int sender, Posted& message, const std::function<std::string()>& what) {
  Inbox& box = *inbox_[static_cast<std::size_t>(sender)];
  std::unique_lock<std::mutex> lock(box.mu);
  world_->wait(lock, box.cv, [&] { return message.consumed; }, what);
}

}  // namespace twinccl::emu
