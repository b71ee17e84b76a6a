#include "exchange.h"

#include <string>

#include "shared_buffers.h"
#include "twinccl/call_site_text.h"
#include "twinccl/operation.h"

namespace twinccl::emu {
namespace {

std::string elements_text(std::size_t count, DataType dtype) {
  return std::to_string(count) + " x " + std::string(name(dtype));
}

// "send/recv mismatch on comm 'world': rank 0 (a.cc:3) sends 4 x float32 to rank 1, but rank 1
// (a.cc:5) receives 8 x float32 from rank 0"; for two pieces of one convenience call, in its
// words: "all_gather on comm 'world': rank 1's tensor (a.cc:9) holds 8 x float32, but rank 0's
// tensor_list[1] (a.cc:9) holds 4 x float32; they must match".
std::string mismatch_text(const Posted& sent, DataType sent_dtype, int sender,
                          const Expected& expected, int receiver) {
  std::string sent_text = elements_text(sent.count, sent_dtype);
  std::string expected_text = elements_text(expected.count, expected.dtype);
  std::string comm = " on comm '" + std::string(expected.comm) + "': ";
  if (!sent.part_of.empty() && sent.part_of == expected.part_of) {
    return std::string(expected.part_of) + comm + "rank " + std::to_string(sender) + "'s " +
           std::string(sent.role) + " (" + describe_call_site(sent.where) + ") holds " + sent_text +
           ", but rank " + std::to_string(receiver) + "'s " + std::string(expected.role) + " (" +
           describe_call_site(expected.where) + ") holds " + expected_text + "; they must match";
  }
  auto piece = [](std::string_view part_of, std::string_view role) {
    return part_of.empty() ? std::string()
                           : " for " + std::string(part_of) + "'s " + std::string(role);
  };
  return "send/recv mismatch" + comm + "rank " + std::to_string(sender) + " (" +
         describe_call_site(sent.where) + ") sends " + sent_text + " to rank " +
         std::to_string(receiver) + piece(sent.part_of, sent.role) + ", but rank " +
         std::to_string(receiver) + " (" + describe_call_site(expected.where) + ") receives " +
         expected_text + " from rank " + std::to_string(sender) +
         piece(expected.part_of, expected.role);
}

}  // namespace

Exchange::Exchange(std::shared_ptr<World> world, int nranks) : world_(std::move(world)) {
  inbox_.reserve(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) inbox_.push_back(std::make_unique<Inbox>());
}

bool Exchange::idle(std::size_t max_queues) {
  std::size_t queues = 0;
  for (const std::unique_ptr<Inbox>& box : inbox_) {
    std::lock_guard<std::mutex> lock(box->mu);
    if (!box->tombstones.empty()) return false;
    for (const auto& [sender, queue] : box->from) {
      if (!queue.empty()) return false;
    }
    for (const auto& [sender, refusals] : box->refused) {
      if (!refusals.empty()) return false;
    }
    queues += box->from.size() + box->refused.size();
    if (queues > max_queues) return false;
  }
  return true;
}

std::string Exchange::rank_text(int comm_rank) const { return "rank " + std::to_string(comm_rank); }

std::uint64_t Exchange::post(int sender, int receiver, Posted& message) {
  message.sender = sender;
  message.receiver = receiver;
  message.consumed = false;
  std::uint64_t number =
      checker_ != nullptr ? checker_->posted(comm_, sender, receiver) : 0;  // before it is visible
  Inbox& box = *inbox_[static_cast<std::size_t>(receiver)];
  bool refused = false;
  {
    std::lock_guard<std::mutex> lock(box.mu);
    auto refusals = box.refused.find(sender);
    if (refusals == box.refused.end() || refusals->second.empty()) {
      box.from[sender].push_back(&message);
    } else {  // the recv meant for this message already failed
      refuse_locked(message, refusals->second.front());
      refusals->second.pop_front();
      refused = true;
    }
  }
  if (refused) {
    if (checker_ != nullptr) checker_->consumed(comm_, sender, receiver);
    return number;
  }
  box.cv.notify_all();
  return number;
}

void Exchange::refuse_locked(Posted& message, const Refusal& refusal) {
  // Only the posting thread knows this message yet: no other lock is needed.
  message.refused = "the matching recv (" + describe_call_site(refusal.where) +
                    ") will never take it: rank " + std::to_string(message.receiver) +
                    " failed: " + refusal.cause;
  message.consumed = true;
}

Posted* Exchange::take(int receiver, int sender, const std::function<std::string()>& what,
                       const WaitSite* site, std::optional<Posted>* tombstone) {
  Inbox& box = *inbox_[static_cast<std::size_t>(receiver)];
  Posted* message = nullptr;
  {
    std::unique_lock<std::mutex> lock(box.mu);
    auto& queue = box.from[sender];
    std::function<void()> hopeless;
    if (!global_ranks_.empty()) {
      hopeless = [&] {
        int global = global_ranks_[static_cast<std::size_t>(sender)];
        if (departures_ != nullptr && departures_->left(sender) && !world_->finished(global)) {
          throw AbortedError(rank_text(receiver) + " waits in recv from " + rank_text(sender) +
                             " on comm '" + comm_name_ + "'" +
                             (site != nullptr ? " (" + describe_call_site(site->where) + ")" : "") +
                             ", but " + rank_text(sender) + " destroyed its communicator '" +
                             comm_name_ + "' without sending it" + world_->returned_note(global));
        }
        if (!world_->finished(global)) return;
        throw AbortedError(rank_text(receiver) + " waits in recv from " + rank_text(sender) +
                           " on comm '" + comm_name_ + "'" +
                           (site != nullptr ? " (" + describe_call_site(site->where) + ")" : "") +
                           ", but " + rank_text(sender) +
                           "'s function already returned without sending it" +
                           world_->returned_note(global));
      };
    }
    world_->wait(
        lock, box.cv, [&] { return !queue.empty(); }, what, hopeless, site,
        bound_of(timeouts_, receiver));
    world_->check_abort();
    message = queue.front();
    queue.pop_front();
    if (!message->failed.empty() && tombstone != nullptr) {
      tombstone->emplace(*message);
      box.tombstones.remove_if([&](const Posted& t) { return &t == message; });
      message = nullptr;
    }
  }
  if (checker_ != nullptr) checker_->consumed(comm_, sender, receiver);
  return message;
}

void Exchange::use_then_consume(int sender, Posted& message,
                                const std::function<void(const Posted&)>& use) {
  try {
    use(message);
  } catch (...) {
    mark_consumed(sender, message);
    throw;
  }
  mark_consumed(sender, message);
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
                       const std::function<void(const Posted&)>& use,
                       const std::function<std::string()>& what) {
  Posted* message = take(receiver, sender, what, nullptr, nullptr);
  if (message->count != expected_count) {
    // Unblock the sender before reporting; the pairing is broken for both sides.
    mark_consumed(sender, *message);
    throw InternalError(what() + ": rank " + std::to_string(sender) + " sent " +
                        std::to_string(message->count) + " elements, rank " +
                        std::to_string(receiver) + " expected " + std::to_string(expected_count));
  }
  use_then_consume(sender, *message, use);
}

void Exchange::consume(int receiver, int sender, const Expected& expected,
                       const std::function<void(const Posted&)>& use,
                       const std::function<std::string()>& what, const WaitSite* site) {
  std::optional<Posted> tombstone;
  Posted* message = nullptr;
  try {
    message = take(receiver, sender, what, site, &tombstone);
  } catch (const std::exception& e) {
    refuse(receiver, sender, expected.where, e.what());  // the send meant for this recv is refused
    throw;
  } catch (...) {
    refuse(receiver, sender, expected.where, "a non-standard exception");
    throw;
  }
  if (message == nullptr) {
    throw AbortedError(call_site_text("recv", expected.comm, receiver, expected.where) + " from " +
                       rank_text(sender) + ": " + tombstone->failed);
  }
  DataType sent_dtype = message->dtype.value_or(expected.dtype);
  if (message->count != expected.count || sent_dtype != expected.dtype) {
    std::string text = mismatch_text(*message, sent_dtype, sender, expected, receiver);
    message->mismatch = text;  // read by the sender after it sees `consumed`
    mark_consumed(sender, *message);
    throw MismatchError(text);
  }
  std::size_t bytes = expected.count * size_of(expected.dtype);
  if (sender != receiver && overlaps(reinterpret_cast<std::uintptr_t>(expected.recv), bytes,
                                     reinterpret_cast<std::uintptr_t>(message->data), bytes)) {
    std::string text = shared_p2p_text(std::string(expected.comm), sender, message->data, bytes,
                                       message->where, receiver, expected.recv, expected.where);
    message->shared = text;  // read by the sender after it sees `consumed`
    mark_consumed(sender, *message);
    throw InvalidArgument(text);
  }
  use_then_consume(sender, *message, use);
}

void Exchange::withdraw(int receiver, Posted& message) {
  {
    Inbox& box = *inbox_[static_cast<std::size_t>(receiver)];
    std::lock_guard<std::mutex> lock(box.mu);
    auto& queue = box.from[message.sender];
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

void Exchange::fail_posted(int receiver, Posted& message, const std::string& cause) {
  {
    Inbox& box = *inbox_[static_cast<std::size_t>(receiver)];
    std::lock_guard<std::mutex> lock(box.mu);
    auto& queue = box.from[message.sender];
    for (auto& slot : queue) {
      if (slot != &message) continue;
      Posted& tombstone = box.tombstones.emplace_back();
      tombstone.sender = message.sender;
      tombstone.receiver = receiver;
      tombstone.where = message.where;
      tombstone.failed = "the matching send (" + describe_call_site(message.where) +
                         ") will never come: rank " + std::to_string(message.sender) +
                         " failed: " + cause;
      slot = &tombstone;  // same place in the FIFO: the recv meant for this send takes it
      return;
    }
  }
  // Refused, consumed, or being read: the reader marks it consumed right after its copy.
  Inbox& own = *inbox_[static_cast<std::size_t>(message.sender)];
  std::unique_lock<std::mutex> lock(own.mu);
  own.cv.wait(lock, [&] { return message.consumed; });
}

void Exchange::post_failed(int sender, int receiver, std::source_location where,
                           const std::string& cause) {
  if (checker_ != nullptr) checker_->posted(comm_, sender, receiver);
  Inbox& box = *inbox_[static_cast<std::size_t>(receiver)];
  bool cancelled = false;
  {
    std::lock_guard<std::mutex> lock(box.mu);
    auto refusals = box.refused.find(sender);
    if (refusals != box.refused.end() && !refusals->second.empty()) {
      // its recv failed too: the two cancel out
      refusals->second.pop_front();
      cancelled = true;
    } else {
      Posted& tombstone = box.tombstones.emplace_back();
      tombstone.sender = sender;
      tombstone.receiver = receiver;
      tombstone.where = where;
      tombstone.failed = "the matching send (" + describe_call_site(where) +
                         ") will never come: rank " + std::to_string(sender) + " failed: " + cause;
      box.from[sender].push_back(&tombstone);
    }
  }
  if (cancelled) {
    if (checker_ != nullptr) checker_->consumed(comm_, sender, receiver);
    return;
  }
  box.cv.notify_all();
}

void Exchange::refuse(int receiver, int sender, std::source_location where,
                      const std::string& cause) {
  Inbox& box = *inbox_[static_cast<std::size_t>(receiver)];
  Posted* message = nullptr;
  bool took = false;
  {
    std::lock_guard<std::mutex> lock(box.mu);
    auto& queue = box.from[sender];
    if (queue.empty()) {
      box.refused[sender].push_back({where, cause});
    } else {
      message = queue.front();
      queue.pop_front();
      took = true;
      if (!message->failed.empty()) {  // a tombstone: both sides failed, they cancel out
        box.tombstones.remove_if([&](const Posted& t) { return &t == message; });
        message = nullptr;
      }
    }
  }
  if (took && checker_ != nullptr) checker_->consumed(comm_, sender, receiver);
  if (message == nullptr) return;
  message->refused = "the matching recv (" + describe_call_site(where) +
                     ") will never take it: rank " + std::to_string(receiver) + " failed: " + cause;
  mark_consumed(sender, *message);  // publishes `refused` to the sender
}

void Exchange::wait_consumed(int sender, Posted& message, const std::function<std::string()>& what,
                             const WaitSite* site) {
  Inbox& box = *inbox_[static_cast<std::size_t>(sender)];
  std::unique_lock<std::mutex> lock(box.mu);
  std::function<void()> hopeless;
  if (!global_ranks_.empty()) {
    hopeless = [&] {
      int global = global_ranks_[static_cast<std::size_t>(message.receiver)];
      if (departures_ != nullptr && departures_->left(message.receiver) &&
          !world_->finished(global)) {
        throw AbortedError(rank_text(sender) + " waits in send to " + rank_text(message.receiver) +
                           " on comm '" + comm_name_ + "' (" + describe_call_site(message.where) +
                           "), but " + rank_text(message.receiver) +
                           " destroyed its communicator '" + comm_name_ + "' without receiving it" +
                           world_->returned_note(global));
      }
      if (!world_->finished(global)) return;
      throw AbortedError(rank_text(sender) + " waits in send to " + rank_text(message.receiver) +
                         " on comm '" + comm_name_ + "' (" + describe_call_site(message.where) +
                         "), but " + rank_text(message.receiver) +
                         "'s function already returned without receiving it" +
                         world_->returned_note(global));
    };
  }
  world_->wait(
      lock, box.cv, [&] { return message.consumed; }, what, hopeless, site,
      bound_of(timeouts_, sender));
  if (!message.mismatch.empty()) throw MismatchError(message.mismatch);
  if (!message.shared.empty()) throw InvalidArgument(message.shared);
  if (!message.refused.empty()) {
    throw AbortedError(call_site_text("send", comm_name_, sender, message.where) + " to " +
                       rank_text(message.receiver) + ": " + message.refused);
  }
}

}  // namespace twinccl::emu
