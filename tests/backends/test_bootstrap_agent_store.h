// A stand-in for torchrun's agent store: a PyTorch c10d TCPStore server written from the
// protocol's description (see backends/store/c10d_client.h for the frames), for the bootstrap
// tests. Like PyTorch's, it drops a connection whose first message is not the VALIDATE
// handshake, and answers a wait only once every key exists.
//
//   FakeAgentStore agent;                 // listens on 127.0.0.1, a free port
//   agent.put("k", "v");  spawn ranks with MASTER_PORT=agent.port() ...;  agent.handshakes()
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace twinccl::test {

class FakeAgentStore {
 public:
  FakeAgentStore() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    (void)::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    (void)::listen(listen_fd_, 128);
    (void)::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeAgentStore() {
    stop_ = true;
    thread_.join();
    for (auto& [fd, c] : clients_) ::close(fd);
    ::close(listen_fd_);
  }
  FakeAgentStore(const FakeAgentStore&) = delete;
  FakeAgentStore& operator=(const FakeAgentStore&) = delete;

  int port() const { return port_; }
  int handshakes() const { return handshakes_; }
  int refused() const { return refused_; }
  void put(const std::string& key, const std::string& value) {
    std::lock_guard lock(mutex_);
    values_[key] = value;
  }
  std::string value(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = values_.find(key);
    return it == values_.end() ? std::string() : it->second;
  }

 private:
  struct Client {
    std::string in;
    bool validated = false;
    std::vector<std::string> awaited;  // keys of a parked wait
  };

  static void put_u64(std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  static bool take_u64(const std::string& in, std::size_t& at, std::uint64_t& v) {
    if (in.size() < at + 8) return false;
    v = 0;
    for (int i = 0; i < 8; ++i)
      v |= std::uint64_t{static_cast<std::uint8_t>(in[at + i])} << (8 * i);
    at += 8;
    return true;
  }
  static bool take_string(const std::string& in, std::size_t& at, std::string& s) {
    std::uint64_t n = 0;
    if (!take_u64(in, at, n) || n > (1u << 20) || in.size() < at + n) return false;
    s = in.substr(at, n);
    at += n;
    return true;
  }
  static void send_all(int fd, const std::string& bytes) {
    (void)::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }

  bool ready(const std::vector<std::string>& keys) {
    for (const auto& k : keys) {
      if (!values_.count(k)) return false;
    }
    return true;
  }

  // Parses as many whole requests as `c.in` holds; false to drop the connection.
  bool handle(int fd, Client& c) {
    for (;;) {
      if (c.in.empty()) return true;
      std::size_t at = 1;
      const auto command = static_cast<std::uint8_t>(c.in[0]);
      if (!c.validated) {
        if (command != 0) return ++refused_, false;
        if (c.in.size() < 5) return true;
        std::uint32_t magic = 0;
        for (int i = 0; i < 4; ++i)
          magic |= std::uint32_t{static_cast<std::uint8_t>(c.in[1 + i])} << (8 * i);
        if (magic != 0x3C85F7CE) return ++refused_, false;
        c.validated = true;
        ++handshakes_;
        c.in.erase(0, 5);
        continue;
      }
      std::lock_guard lock(mutex_);
      std::string key, value, out;
      std::uint64_t n = 0;
      if (command == 1) {  // set
        if (!take_string(c.in, at, key) || !take_string(c.in, at, value)) return true;
        values_[key] = value;
        wake();
      } else if (command == 3) {  // get
        if (!take_string(c.in, at, key)) return true;
        put_u64(out, values_[key].size());
        send_all(fd, out + values_[key]);
      } else if (command == 4) {  // add
        if (!take_string(c.in, at, key) || !take_u64(c.in, at, n)) return true;
        const long long sum =
            (values_.count(key) ? std::stoll(values_[key]) : 0) + static_cast<long long>(n);
        values_[key] = std::to_string(sum);
        put_u64(out, static_cast<std::uint64_t>(sum));
        send_all(fd, out);
        wake();
      } else if (command == 6) {  // wait
        if (!take_u64(c.in, at, n)) return true;
        std::vector<std::string> keys(n);
        for (auto& k : keys) {
          if (!take_string(c.in, at, k)) return true;
        }
        if (ready(keys)) {
          send_all(fd, std::string(1, '\0'));
        } else {
          c.awaited = keys;
        }
      } else {
        return false;  // not needed by the bootstrap: drop, as for a garbled request
      }
      c.in.erase(0, at);
    }
  }

  void wake() {
    for (auto& [fd, c] : clients_) {
      if (!c.awaited.empty() && ready(c.awaited)) {
        c.awaited.clear();
        send_all(fd, std::string(1, '\0'));
      }
    }
  }

  void serve() {
    while (!stop_) {
      std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
      for (auto& [fd, c] : clients_) fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN) {
        const int fd = ::accept(listen_fd_, nullptr, nullptr);
        if (fd >= 0) clients_[fd] = Client{};
      }
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        char buf[4096];
        const ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, 0);
        Client& c = clients_[fds[i].fd];
        if (n > 0) c.in.append(buf, static_cast<std::size_t>(n));
        if (n <= 0 || !handle(fds[i].fd, c)) {
          ::close(fds[i].fd);
          clients_.erase(fds[i].fd);
        }
      }
    }
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> handshakes_{0};
  std::atomic<int> refused_{0};
  std::mutex mutex_;
  std::map<std::string, std::string> values_;
  std::map<int, Client> clients_;  // server thread only
};

}  // namespace twinccl::test
