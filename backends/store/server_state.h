// What the store server remembers: values, and who is parked waiting for a missing key. No
// sockets here (the fuzz target drives it directly); touched only from the server's io_context
// thread, so it has no lock.
//
//   ServerState state(64 << 20);                      // cap on stored bytes (keys + values)
//   Outcome out = state.handle(frame);                 // set/add/get/wait
//   if (out.park) state.park(frame.key, waiter);       // get/wait of a missing key
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/frame_parser.h"
#include "store/protocol.h"

namespace twinccl::store {

using Value = std::shared_ptr<const std::string>;  // shared by the table and every reply

// Someone parked on a missing key (a server session, or the fuzz target's stand-in).
class Waiter {
 public:
  virtual ~Waiter() = default;
  // The key now holds `value`; called once, after the waiter left the table.
  virtual void key_arrived(const Value& value) = 0;
};

// What a request asks the session to do: reply now, or park until the key is set.
struct Outcome {
  bool park = false;
  Status status = Status::ok;
  Value value;  // reply body (empty for set/wait), or the error text for bad_request/store_full
};

class ServerState {
 public:
  explicit ServerState(std::size_t max_stored_bytes) : max_stored_bytes_(max_stored_bytes) {}

  Outcome handle(const Frame& frame);
  void park(const std::string& key, std::shared_ptr<Waiter> waiter);
  void unpark(const std::string& key, const Waiter* waiter);
  void clear();

  std::size_t stored_bytes() const { return stored_bytes_; }  // keys + values
  std::size_t parked() const;
  const std::map<std::string, Value, std::less<>>& values() const { return values_; }

 private:
  // Stores the value and wakes every waiter parked on the key; nullopt, or the refusal text.
  std::optional<std::string> set(const std::string& key, std::string value);
  Outcome add(const std::string& key, std::int64_t delta);

  std::size_t max_stored_bytes_;
  std::size_t stored_bytes_ = 0;
  std::map<std::string, Value, std::less<>> values_;
  std::map<std::string, std::vector<std::shared_ptr<Waiter>>, std::less<>> waiters_;
};

}  // namespace twinccl::store
