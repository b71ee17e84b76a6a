// The store server's tables (see server_state.h).
#include "store/server_state.h"

#include <algorithm>
#include <limits>

#include "store/protocol.h"

namespace twinccl::store {

const std::string* ServerState::find(const std::string& key) const {
  auto it = values.find(key);
  return it == values.end() ? nullptr : &it->second;
}

void ServerState::set(const std::string& key, std::string value) {
  std::string& stored = values[key];
  stored = std::move(value);
  auto it = waiters.find(key);
  if (it == waiters.end()) return;
  std::vector<std::shared_ptr<Session>> parked = std::move(it->second);
  waiters.erase(it);
  const std::string copy = stored;  // a woken session may not see `values` change under it
  for (const auto& session : parked) wake(session, copy);
}

std::optional<std::int64_t> ServerState::add(const std::string& key, std::int64_t delta,
                                             std::string* error) {
  std::int64_t current = 0;
  if (const std::string* found = find(key)) {
    auto parsed = parse_counter(*found);
    if (!parsed) {
      *error = "add on key '" + key + "': its value is not a counter (" +
               std::to_string(found->size()) + " bytes of data)";
      return std::nullopt;
    }
    current = *parsed;
  }
  const bool overflow =
      (delta > 0 && current > std::numeric_limits<std::int64_t>::max() - delta) ||
      (delta < 0 && current < std::numeric_limits<std::int64_t>::min() - delta);
  if (overflow) {
    *error = "add on key '" + key + "': " + std::to_string(current) + " + " +
             std::to_string(delta) + " overflows a 64-bit counter";
    return std::nullopt;
  }
  set(key, std::to_string(current + delta));
  return current + delta;
}

void ServerState::park(const std::string& key, std::shared_ptr<Session> session) {
  waiters[key].push_back(std::move(session));
}

void ServerState::unpark(const std::string& key, const Session* session) {
  auto it = waiters.find(key);
  if (it == waiters.end()) return;
  auto& list = it->second;
  list.erase(std::remove_if(list.begin(), list.end(),
                            [session](const std::shared_ptr<Session>& s) { return s.get() == session; }),
             list.end());
  if (list.empty()) waiters.erase(it);
}

void ServerState::clear() {
  waiters.clear();
  values.clear();
  sessions.clear();
}

}  // namespace twinccl::store
