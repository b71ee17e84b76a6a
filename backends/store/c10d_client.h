// A client of PyTorch's c10d TCPStore, the store torchrun's agent already serves on
// MASTER_ADDR:MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE=True). Written from the protocol's
// description, not from PyTorch's code; used only by the bootstrap (bootstrap.cc).
//
//   C10dStoreClient store("node17", 29500, deadline);   // connects and sends the handshake
//   store.set("twinccl/.../id", bytes);  std::string id = store.get("twinccl/.../id", deadline);
//
// The wire format (PyTorch >= 2.1, little-endian, one request at a time per connection):
//   handshake  0x00 VALIDATE | u32 0x3C85F7CE                        (no reply)
//   set        0x01 | u64 key_len | key | u64 value_len | value      (no reply)
//   get        0x03 | u64 key_len | key            -> u64 value_len | value (key must exist)
//   add        0x04 | u64 key_len | key | i64 delta -> i64 new value (stored as decimal text)
//   wait       0x06 | u64 n_keys | (u64 key_len | key)...  -> u8 0 once every key exists
// A wait has no timeout on the server; on our deadline the connection is closed, which makes
// the server forget the wait. get is therefore always wait-then-get.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace twinccl::store {

class C10dStoreClient {
 public:
  using Clock = std::chrono::steady_clock;

  // Connects (retrying until `deadline`) and sends the handshake. TimeoutError/BackendError.
  C10dStoreClient(std::string host, int port, Clock::time_point deadline);
  ~C10dStoreClient();
  C10dStoreClient(const C10dStoreClient&) = delete;
  C10dStoreClient& operator=(const C10dStoreClient&) = delete;

  void set(std::string_view key, std::string_view value, Clock::time_point deadline);
  std::int64_t add(std::string_view key, std::int64_t delta, Clock::time_point deadline);
  // Blocks until `key` exists, then returns its value (at most 1 MiB). TimeoutError at deadline.
  std::string get(std::string_view key, Clock::time_point deadline);

  const std::string& address() const { return address_; }

 private:
  void send_all(const std::string& bytes, Clock::time_point deadline, std::string_view doing);
  std::string receive(std::size_t bytes, Clock::time_point deadline, std::string_view doing);
  void close_socket();

  std::string host_;
  int port_ = 0;
  std::string address_;
  int fd_ = -1;
};

}  // namespace twinccl::store
