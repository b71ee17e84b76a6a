// What the store server remembers: values, sessions parked on missing keys, live sessions.
// Touched only from the server's io_context thread, so it has no lock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace twinccl::store {

class Session;
// Defined next to Session (server.cc): answer a parked get/wait with the key's value.
void wake(const std::shared_ptr<Session>& session, const std::string& value);
void close_session(Session* session);

struct ServerState {
  std::map<std::string, std::string, std::less<>> values;
  std::map<std::string, std::vector<std::shared_ptr<Session>>, std::less<>> waiters;
  std::set<Session*> sessions;

  const std::string* find(const std::string& key) const;
  // Stores the value and wakes every session parked on the key.
  void set(const std::string& key, std::string value);
  // Counter add (missing key = 0). nullopt with `error` when the stored value is not a decimal
  // integer or the sum overflows.
  std::optional<std::int64_t> add(const std::string& key, std::int64_t delta, std::string* error);
  void park(const std::string& key, std::shared_ptr<Session> session);
  void unpark(const std::string& key, const Session* session);
  void clear();
};

}  // namespace twinccl::store
