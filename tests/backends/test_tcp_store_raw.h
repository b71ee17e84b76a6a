// Raw loopback sockets for the store tests: frames built by hand, so the tests also pin the wire
// format ('T' 'S' | cmd u8 | key u16 | value u32 | timeout u32, little-endian).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "twinccl/errors.h"
#include "twinccl/tcp_store.h"

namespace twinccl::test {

// A raw TCP connection to 127.0.0.1:port.
class RawClient {
 public:
  // No Catch2 macros here: fuzz threads use it too, and Catch2 v2 is not thread-safe.
  explicit RawClient(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (fd_ < 0) return;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  }
  bool connected() const { return connected_; }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void send_bytes(const std::vector<std::uint8_t>& bytes) {
    // The server may already have closed; a failed send is part of what is being tested.
    (void)::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }

  // True when the server closed the connection (EOF or reset) within `timeout`.
  bool closed_by_server(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::uint8_t buf[256];
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (::poll(&p, 1, static_cast<int>(std::max<long>(1, left.count()))) <= 0) continue;
      const auto n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return true;
    }
    return false;
  }

  // Reads exactly `n` bytes within `timeout`; empty when the connection closed or time ran out.
  std::vector<std::uint8_t> read_bytes(std::size_t n, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<std::uint8_t> out;
    std::uint8_t buf[4096];
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 10) <= 0) continue;
      const auto got = ::recv(fd_, buf, std::min(sizeof buf, n - out.size()), 0);
      if (got <= 0) return {};
      out.insert(out.end(), buf, buf + got);
    }
    return out.size() == n ? out : std::vector<std::uint8_t>{};
  }

 private:
  int fd_;
  bool connected_ = false;
};

inline std::vector<std::uint8_t> header(std::uint8_t command, std::uint16_t key_bytes,
                                        std::uint32_t value_bytes, std::uint32_t timeout_ms = 0) {
  std::vector<std::uint8_t> h = {'T', 'S', command};
  h.push_back(static_cast<std::uint8_t>(key_bytes & 0xFF));
  h.push_back(static_cast<std::uint8_t>(key_bytes >> 8));
  for (int i = 0; i < 4; ++i)
    h.push_back(static_cast<std::uint8_t>((value_bytes >> (8 * i)) & 0xFF));
  for (int i = 0; i < 4; ++i)
    h.push_back(static_cast<std::uint8_t>((timeout_ms >> (8 * i)) & 0xFF));
  return h;
}

inline std::vector<std::uint8_t> frame(std::uint8_t command, const std::string& key,
                                       const std::string& value, std::uint32_t timeout_ms = 0) {
  auto f = header(command, static_cast<std::uint16_t>(key.size()),
                  static_cast<std::uint32_t>(value.size()), timeout_ms);
  f.insert(f.end(), key.begin(), key.end());
  f.insert(f.end(), value.begin(), value.end());
  return f;
}

// A well-behaved client still gets answers (no Catch2 macros: called from threads too).
inline bool serving(int port, const std::string& tag) {
  using namespace std::chrono_literals;
  try {
    TcpStoreClient c("127.0.0.1", port, {.connect_timeout = 2000ms, .timeout = 2000ms});
    c.set("probe/" + tag, tag);
    return c.get("probe/" + tag) == tag;
  } catch (const twinccl::Error&) {
    return false;
  }
}

}  // namespace twinccl::test
