// PyTorch c10d TCPStore client (see c10d_client.h).
//
// How it works: one blocking TCP socket driven with poll() so that every send and receive has
// the caller's deadline; a failure or a deadline closes the socket (the server then drops any
// wait of ours) and throws an error naming host:port and the call.
#include "store/c10d_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "twinccl/errors.h"

namespace twinccl::store {
namespace {

constexpr std::uint8_t kValidate = 0, kSet = 1, kGet = 3, kAdd = 4, kWait = 6;
constexpr std::uint32_t kValidateMagic = 0x3C85F7CE;
constexpr std::uint64_t kMaxValueBytes = std::uint64_t{1} << 20;
constexpr const char* kHint = " (is MASTER_PORT served by torchrun's agent store, PyTorch >= 2.1?)";

void put_le(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFu));
}

std::uint64_t get_le(const std::string& in) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < in.size(); ++i)
    v |= std::uint64_t{static_cast<std::uint8_t>(in[i])} << (8 * i);
  return v;
}

void put_string(std::string& out, std::string_view s) {
  put_le(out, s.size(), 8);
  out.append(s);
}

int ms_until(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 1'000'000));
}

// One connect attempt; the socket fd, or -1 with `error` filled.
int try_connect(const std::string& host, int port, std::chrono::steady_clock::time_point deadline,
                std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    *error = std::string("cannot resolve host: ") + ::gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      int err = ETIMEDOUT;
      socklen_t len = sizeof err;
      if (::poll(&p, 1, ms_until(deadline)) > 0)
        (void)::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc != 0) {
      *error = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  ::freeaddrinfo(found);
  if (fd >= 0) {
    const int one = 1;
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

}  // namespace

C10dStoreClient::C10dStoreClient(std::string host, int port, Clock::time_point deadline)
    : host_(std::move(host)), port_(port), address_(host_ + ":" + std::to_string(port)) {
  std::string error = "no attempt made";
  auto backoff = std::chrono::milliseconds(20);
  while ((fd_ = try_connect(host_, port_, deadline, &error)) < 0) {
    if (Clock::now() >= deadline) {
      throw TimeoutError("torchrun agent store " + address_ +
                         ": could not connect before the deadline (last error: " + error + ")");
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(backoff, deadline - Clock::now()));
    backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
  }
  std::string hello(1, static_cast<char>(kValidate));
  put_le(hello, kValidateMagic, 4);
  send_all(hello, deadline, "sending the handshake");
}

C10dStoreClient::~C10dStoreClient() { close_socket(); }

void C10dStoreClient::close_socket() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void C10dStoreClient::send_all(const std::string& bytes, Clock::time_point deadline,
                               std::string_view doing) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    if (fd_ < 0)
      throw BackendError("torchrun agent store " + address_ + ": connection closed before " +
                         std::string(doing));
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, ms_until(deadline)) <= 0) {
      close_socket();
      throw TimeoutError("torchrun agent store " + address_ + ": deadline passed while " +
                         std::string(doing));
    }
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      close_socket();
      throw BackendError("torchrun agent store " + address_ + ": connection lost while " +
                         std::string(doing) + ": " + why);
    }
    sent += static_cast<std::size_t>(n);
  }
}

std::string C10dStoreClient::receive(std::size_t bytes, Clock::time_point deadline,
                                     std::string_view doing) {
  std::string out(bytes, '\0');
  std::size_t got = 0;
  while (got < bytes) {
    if (fd_ < 0)
      throw BackendError("torchrun agent store " + address_ + ": connection closed before " +
                         std::string(doing));
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, ms_until(deadline)) <= 0) {
      close_socket();  // the server forgets a wait of a closed connection
      throw TimeoutError("torchrun agent store " + address_ + ": no answer while " +
                         std::string(doing) + " before the deadline");
    }
    const ssize_t n = ::recv(fd_, out.data() + got, bytes - got, 0);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
    if (n <= 0) {
      close_socket();
      throw BackendError("torchrun agent store " + address_ +
                         ": connection closed by the store while " + std::string(doing) + kHint);
    }
    got += static_cast<std::size_t>(n);
  }
  return out;
}

void C10dStoreClient::set(std::string_view key, std::string_view value,
                          Clock::time_point deadline) {
  std::string request(1, static_cast<char>(kSet));
  put_string(request, key);
  put_string(request, value);
  send_all(request, deadline, "sending set('" + std::string(key) + "')");
}

std::int64_t C10dStoreClient::add(std::string_view key, std::int64_t delta,
                                  Clock::time_point deadline) {
  const std::string doing = "add('" + std::string(key) + "')";
  std::string request(1, static_cast<char>(kAdd));
  put_string(request, key);
  put_le(request, static_cast<std::uint64_t>(delta), 8);
  send_all(request, deadline, doing);
  return static_cast<std::int64_t>(get_le(receive(8, deadline, doing)));
}

std::string C10dStoreClient::get(std::string_view key, Clock::time_point deadline) {
  const std::string doing = "waiting for key '" + std::string(key) + "'";
  std::string wait(1, static_cast<char>(kWait));
  put_le(wait, 1, 8);
  put_string(wait, key);
  send_all(wait, deadline, doing);
  const std::string answer = receive(1, deadline, doing);
  if (answer[0] != 0) {
    close_socket();
    throw BackendError("torchrun agent store " + address_ + ": unexpected answer " +
                       std::to_string(static_cast<std::uint8_t>(answer[0])) + " while " + doing +
                       kHint);
  }
  std::string request(1, static_cast<char>(kGet));
  put_string(request, key);
  send_all(request, deadline, "get('" + std::string(key) + "')");
  const std::uint64_t bytes = get_le(receive(8, deadline, "get('" + std::string(key) + "')"));
  if (bytes > kMaxValueBytes) {
    close_socket();
    throw BackendError("torchrun agent store " + address_ + ": get('" + std::string(key) +
                       "') announced " + std::to_string(bytes) + " bytes (limit " +
                       std::to_string(kMaxValueBytes) + ")" + kHint);
  }
  return receive(static_cast<std::size_t>(bytes), deadline, "get('" + std::string(key) + "')");
}

}  // namespace twinccl::store
