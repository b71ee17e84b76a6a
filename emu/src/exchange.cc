#include "twinccl/emu/exchange.h"

#include <string>

#include "twinccl/operation.h"

namespace twinccl::emu {

Exchange::Exchange(std::shared_ptr<World> world, int nranks) : world_(std::move(world)) {
  inbox_.reserve(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    auto box = std::make_unique<Inbox>();
    box->from.resize(static_cast<std::size_t>(nranks));
    inbox_.push_back(std::move(box));
  }
}

std::uint64_t Exchange::post(int sender, int receiver, Posted& message) {
  message.sender = sender;
  message.consumed = false;
  std::uint64_t number = checker_ != nullptr ? checker_->posted(comm_, sender, receiver) : 0;  // before it is visible
  Inbox& box = *inbox_[static_cast<std::size_t>(receiver)];
  {
    std::lock_guard<std::mutex> lock(box.mu);
    box.from[static_cast<std::size_t>(sender)].push_back(&message);
  }
  box.cv.notify_all();
  return number;
}

Posted* Exchange::take(int receiver, int sender, const std::function<std::string()>& what, const WaitSite* site) {
  Inbox& box = *inbox_[static_cast<std::size_t>(receiver)];
  Posted* message = nullptr;
  {
    std::unique_lock<std::mutex> lock(box.mu);
    auto& queue = box.from[static_cast<std::size_t>(sender)];
    world_->wait(lock, box.cv, [&] { return !queue.empty(); }, what, {}, site);
    world_->check_abort();
    message = queue.front();
    queue.pop_front();
  }
  if (checker_ != nullptr) checker_->consumed(comm_, sender, receiver);
  return message;
}

void Exchange::mark_consumed(int sender, Posted& message) {
  Inbox& sbox = *inbox_[static_cast<std::size_t>(sender)];
  {
    std::lock_guard<std::mutex> lock(sbox.mu);
    message.consumed = true;
  }
  sbox.cv.notify_all();
}

void Exchange::consume(int receiver, int sender, std::size_t expected_count,
                       const std::function<void(const Posted&)>& use, const std::function<std::string()>& what) {
  Posted* message = take(receiver, sender, what, nullptr);
  if (message->count != expected_count) {
    // Unblock the sender before reporting; the pairing is broken for both sides.
    mark_consumed(sender, *message);
    throw InternalError(what() + ": rank " + std::to_string(sender) + " sent " + std::to_string(message->count) +
                        " elements, rank " + std::to_string(receiver) + " expected " + std::to_string(expected_count));
  }
  try {
    use(*message);
  } catch (...) {
    mark_consumed(sender, *message);
    throw;
  }
  mark_consumed(sender, *message);
}

void Exchange::consume(int receiver, int sender, const Expected& expected,
                       const std::function<void(const Posted&)>& use, const std::function<std::string()>& what,
                       const WaitSite* site) {
  Posted* message = take(receiver, sender, what, site);
  DataType sent_dtype = message->dtype.value_or(expected.dtype);
  if (message->count != expected.count || sent_dtype != expected.dtype) {
    std::string text = "send/recv mismatch on comm '" + std::string(expected.comm) + "': rank " +
                       std::to_string(sender) + " (" + describe_call_site(message->where) + ") sends " +
                       std::to_string(message->count) + " x " + std::string(name(sent_dtype)) + " to rank " +
                       std::to_string(receiver) + ", but rank " + std::to_string(receiver) + " (" +
                       describe_call_site(expected.where) + ") receives " + std::to_string(expected.count) + " x " +
                       std::string(name(expected.dtype)) + " from rank " + std::to_string(sender);
    message->mismatch = text;  // read by the sender after it sees `consumed`
    mark_consumed(sender, *message);
    throw MismatchError(text);
  }
  try {
    use(*message);
  } catch (...) {
    mark_consumed(sender, *message);
    throw;
  }
  mark_consumed(sender, *message);
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

void Exchange::wait_consumed(int sender, Posted& message, const std::function<std::string()>& what,
                             const WaitSite* site) {
  Inbox& box = *inbox_[static_cast<std::size_t>(sender)];
  std::unique_lock<std::mutex> lock(box.mu);
  world_->wait(lock, box.cv, [&] { return message.consumed; }, what, {}, site);
  if (!message.mismatch.empty()) throw MismatchError(message.mismatch);
}

}  // namespace twinccl::emu
