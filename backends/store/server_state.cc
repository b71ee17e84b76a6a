// The store server's tables (see server_state.h).
#include "store/server_state.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace twinccl::store {
namespace {

Value text(std::string s) { return std::make_shared<const std::string>(std::move(s)); }

// Keys are at most 1 KiB, so quoting one keeps every message short.
std::string quoted(const std::string& key) { return "'" + key + "'"; }

}  // namespace

Outcome ServerState::handle(const Frame& frame) {
  switch (frame.header.command) {
    case Command::set:
      if (auto refused = set(frame.key, frame.value))
        return {false, Status::store_full, text(*refused)};
      return {false, Status::ok, nullptr};
    case Command::add:
      return add(frame.key, decode_i64(frame.value));
    case Command::get:
    case Command::wait: {
      auto it = values_.find(frame.key);
      if (it == values_.end()) return {true, Status::ok, nullptr};
      return {false, Status::ok, frame.header.command == Command::get ? it->second : nullptr};
    }
  }
  return {false, Status::bad_request, text("unknown command")};
}

std::optional<std::string> ServerState::set(const std::string& key, std::string value) {
  auto it = values_.find(key);
  const std::size_t old_bytes = it == values_.end() ? 0 : key.size() + it->second->size();
  const std::size_t new_bytes = key.size() + value.size();
  const std::size_t total = stored_bytes_ - old_bytes + new_bytes;
  if (total > max_stored_bytes_ && new_bytes > old_bytes) {
    return "store full: set(" + quoted(key) + ") of " + std::to_string(value.size()) +
           " bytes would hold " + std::to_string(total) + " bytes (limit " +
           std::to_string(max_stored_bytes_) + " bytes of keys and values)";
  }
  stored_bytes_ = total;
  Value stored = text(std::move(value));
  values_[key] = stored;
  auto parked = waiters_.find(key);
  if (parked == waiters_.end()) return std::nullopt;
  std::vector<std::shared_ptr<Waiter>> woken = std::move(parked->second);
  waiters_.erase(parked);
  for (const auto& waiter : woken) waiter->key_arrived(stored);
  return std::nullopt;
}

Outcome ServerState::add(const std::string& key, std::int64_t delta) {
  std::int64_t current = 0;
  if (auto it = values_.find(key); it != values_.end()) {
    auto parsed = parse_counter(*it->second);
    if (!parsed) {
      return {false, Status::bad_request,
              text("add on key " + quoted(key) + ": its value is not a counter (" +
                   std::to_string(it->second->size()) + " bytes of data)")};
    }
    current = *parsed;
  }
  const bool overflow = (delta > 0 && current > std::numeric_limits<std::int64_t>::max() - delta) ||
                        (delta < 0 && current < std::numeric_limits<std::int64_t>::min() - delta);
  if (overflow) {
    return {false, Status::bad_request,
            text("add on key " + quoted(key) + ": " + std::to_string(current) + " + " +
                 std::to_string(delta) + " overflows a 64-bit counter")};
  }
  if (auto refused = set(key, std::to_string(current + delta))) {
    return {false, Status::store_full, text(*refused)};
  }
  return {false, Status::ok, text(encode_i64(current + delta))};
}

void ServerState::park(const std::string& key, std::shared_ptr<Waiter> waiter) {
  waiters_[key].push_back(std::move(waiter));
}

void ServerState::unpark(const std::string& key, const Waiter* waiter) {
  auto it = waiters_.find(key);
  if (it == waiters_.end()) return;
  auto& list = it->second;
  list.erase(
      std::remove_if(list.begin(), list.end(),
                     [waiter](const std::shared_ptr<Waiter>& w) { return w.get() == waiter; }),
      list.end());
  if (list.empty()) waiters_.erase(it);
}

std::size_t ServerState::parked() const {
  std::size_t n = 0;
  for (const auto& [key, list] : waiters_) n += list.size();
  return n;
}

void ServerState::clear() {
  waiters_.clear();
  values_.clear();
  stored_bytes_ = 0;
}

}  // namespace twinccl::store
