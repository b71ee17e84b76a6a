// The store client: blocking calls over one TCP connection, every one with a deadline.
//
// How it works: Boost.Asio's sync calls cannot time out, so each call starts the async operation
// and runs the client's private io_context until the operation completes or the deadline passes;
// on the deadline the socket is closed (which cancels the operation) and the call throws. A
// get/wait carries its timeout to the server, which answers "timeout" itself; the client waits a
// little longer than that (kReplyGrace) before deciding the server is gone. The server closes
// connections that idle past its idle_timeout; before each request the client looks whether its
// connection was closed that way (readable with nothing asked) and reconnects instead of failing.
#include <poll.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>

#include "store/asio.h"
#include "store/protocol.h"
#include "twinccl/errors.h"
#include "twinccl/tcp_store.h"

namespace twinccl {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using store::Command;
using store::Status;

namespace {

constexpr milliseconds kReplyGrace{2000};

std::string ms_text(milliseconds ms) { return std::to_string(ms.count()) + " ms"; }

std::string call_text(Command command, std::string_view key) {
  return std::string(store::name(command)) + "('" + std::string(key) + "')";
}

}  // namespace

struct TcpStoreClient::Impl {
  std::string host;
  int port = 0;
  StoreClientOptions options;
  std::string address;
  std::mutex mutex;
  asio::io_context io;
  std::optional<tcp::socket> socket;

  // Runs io until *done or the deadline; on the deadline cancels by closing the socket.
  bool run_until(const bool& done, Clock::time_point deadline) {
    io.restart();
    while (!done) {
      if (io.run_one_until(deadline) == 0) break;
    }
    if (done) return true;
    drop();
    io.restart();
    while (!done && io.run_one() > 0) {
    }
    return false;
  }

  // True when the server closed this idle connection (EOF or an error pending, nothing asked).
  bool closed_by_server() {
    pollfd p{socket->native_handle(), POLLIN, 0};
    return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
  }

  void drop() {
    if (!socket) return;
    boost::system::error_code ignored;
    socket->close(ignored);
  }

  void connect() {
    const auto deadline = Clock::now() + options.connect_timeout;
    std::string last_error = "no attempt made";
    milliseconds backoff{20};
    for (;;) {
      boost::system::error_code ec;
      tcp::resolver resolver(io);
      auto endpoints =
          resolver.resolve(host, std::to_string(port), tcp::resolver::numeric_service, ec);
      if (ec) {
        last_error = "cannot resolve host: " + ec.message();
      } else {
        socket.emplace(io);
        bool done = false;
        asio::async_connect(*socket, endpoints,
                            [&](boost::system::error_code e, const tcp::endpoint&) {
                              ec = e;
                              done = true;
                            });
        if (!run_until(done, deadline)) {
          ec = asio::error::timed_out;
        }
        if (!ec) {
          socket->set_option(tcp::no_delay(true), ec);
          return;
        }
        last_error = ec.message();
        drop();
        socket.reset();
      }
      const auto now = Clock::now();
      if (now >= deadline) {
        throw TimeoutError("store " + address + ": could not connect within " +
                           ms_text(options.connect_timeout) + " (last error: " + last_error + ")");
      }
      std::this_thread::sleep_for(std::min<Clock::duration>(backoff, deadline - now));
      backoff = std::min(backoff * 2, milliseconds(1000));
    }
  }

  // Sends one request and returns the reply's status and value.
  std::pair<Status, std::string> exchange(Command command, std::string_view key,
                                          std::string_view value, milliseconds wait,
                                          Clock::time_point deadline) {
    if (key.empty() || key.size() > store::kMaxKeyBytes) {
      throw InvalidArgument("store " + address + ": " + std::string(store::name(command)) +
                            " with a key of " + std::to_string(key.size()) + " bytes (allowed 1.." +
                            std::to_string(store::kMaxKeyBytes) + ")");
    }
    if (value.size() > store::kMaxValueBytes) {
      throw InvalidArgument("store " + address + ": " + call_text(command, key) +
                            " with a value of " + std::to_string(value.size()) + " bytes (limit " +
                            std::to_string(store::kMaxValueBytes) + ")");
    }
    if (socket && socket->is_open() && closed_by_server()) {
      drop();
      socket.reset();
    }
    if (!socket || !socket->is_open()) connect();
    const auto clamp_ms = std::clamp<std::int64_t>(wait.count(), 0, std::int64_t{0xFFFFFFFF});
    auto header = store::encode(store::RequestHeader{
        command, static_cast<std::uint16_t>(key.size()), static_cast<std::uint32_t>(value.size()),
        static_cast<std::uint32_t>(clamp_ms)});
    std::array<asio::const_buffer, 3> frame = {asio::buffer(header),
                                               asio::buffer(key.data(), key.size()),
                                               asio::buffer(value.data(), value.size())};
    boost::system::error_code ec;
    bool done = false;
    asio::async_write(*socket, frame, [&](boost::system::error_code e, std::size_t) {
      ec = e;
      done = true;
    });
    check(run_until(done, deadline), ec, command, key, "sending");

    std::array<std::uint8_t, store::kReplyHeaderBytes> reply_header{};
    done = false;
    asio::async_read(*socket, asio::buffer(reply_header),
                     [&](boost::system::error_code e, std::size_t) {
                       ec = e;
                       done = true;
                     });
    check(run_until(done, deadline), ec, command, key, "waiting for the reply to");
    std::string why;
    auto reply = store::decode_reply(reply_header.data(), &why);
    if (!reply) {
      drop();
      throw BackendError("store " + address + ": malformed reply to " + call_text(command, key) +
                         ": " + why);
    }
    std::string out(reply->value_bytes, '\0');
    done = false;
    asio::async_read(*socket, asio::buffer(out), [&](boost::system::error_code e, std::size_t) {
      ec = e;
      done = true;
    });
    check(run_until(done, deadline), ec, command, key, "reading the reply to");
    return {reply->status, std::move(out)};
  }

  void check(bool in_time, const boost::system::error_code& ec, Command command,
             std::string_view key, const char* doing) {
    if (!in_time) {
      throw TimeoutError("store " + address + ": no answer while " + doing + " " +
                         call_text(command, key) + " (connection dropped)");
    }
    if (ec) {
      drop();
      throw BackendError("store " + address + ": connection lost while " + doing + " " +
                         call_text(command, key) + ": " + ec.message());
    }
  }

  std::string waiting_call(Command command, std::string_view key, milliseconds timeout) {
    std::lock_guard lock(mutex);
    auto [status, value] =
        exchange(command, key, {}, timeout, Clock::now() + timeout + kReplyGrace);
    if (status == Status::timeout) {
      throw TimeoutError("store " + address + ": " + call_text(command, key) + " timed out after " +
                         ms_text(timeout) + ": the key was never set");
    }
    if (status != Status::ok) {
      throw BackendError("store " + address + ": " + call_text(command, key) + " failed: " + value);
    }
    return value;
  }
};

TcpStoreClient::TcpStoreClient(std::string host, int port, StoreClientOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(host);
  impl_->port = port;
  impl_->options = options;
  impl_->address = impl_->host + ":" + std::to_string(port);
  if (port <= 0 || port > 65535) {
    throw InvalidArgument("store client: port " + std::to_string(port) +
                          " out of range [1, 65535] for " + impl_->address);
  }
  std::lock_guard lock(impl_->mutex);
  impl_->connect();
}

TcpStoreClient::~TcpStoreClient() = default;

void TcpStoreClient::set(std::string_view key, std::string_view value) {
  std::lock_guard lock(impl_->mutex);
  auto [status, reply] = impl_->exchange(Command::set, key, value, milliseconds(0),
                                         Clock::now() + impl_->options.timeout);
  if (status != Status::ok) {
    throw BackendError("store " + impl_->address + ": " + call_text(Command::set, key) +
                       " failed: " + reply);
  }
}

std::string TcpStoreClient::get(std::string_view key) { return get(key, impl_->options.timeout); }

std::string TcpStoreClient::get(std::string_view key, milliseconds timeout) {
  return impl_->waiting_call(Command::get, key, timeout);
}

void TcpStoreClient::wait(std::span<const std::string> keys) { wait(keys, impl_->options.timeout); }

void TcpStoreClient::wait(std::span<const std::string> keys, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (const std::string& key : keys) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    try {
      impl_->waiting_call(Command::wait, key, std::max(left, milliseconds(0)));
    } catch (const TimeoutError&) {
      throw TimeoutError("store " + impl_->address + ": wait('" + key + "') timed out after " +
                         ms_text(timeout) + " (waiting for " + std::to_string(keys.size()) +
                         " keys): the key was never set");
    }
  }
}

std::int64_t TcpStoreClient::add(std::string_view key, std::int64_t delta) {
  std::lock_guard lock(impl_->mutex);
  auto [status, reply] = impl_->exchange(Command::add, key, store::encode_i64(delta),
                                         milliseconds(0), Clock::now() + impl_->options.timeout);
  if (status != Status::ok || reply.size() != 8) {
    throw BackendError(
        "store " + impl_->address + ": " + call_text(Command::add, key) + " failed: " +
        (status == Status::ok ? "reply of " + std::to_string(reply.size()) + " bytes" : reply));
  }
  return store::decode_i64(reply);
}

const std::string& TcpStoreClient::address() const { return impl_->address; }

void store_barrier(TcpStoreClient& store, std::string_view name, int world_size,
                   milliseconds timeout) {
  const std::string done_key = std::string(name) + "/done";
  const std::int64_t arrived = store.add(name, 1);
  if (arrived > world_size) {
    throw InvalidArgument("store barrier '" + std::string(name) + "' on " + store.address() + ": " +
                          std::to_string(arrived) + " arrivals for a world of " +
                          std::to_string(world_size) + " (barrier name reused?)");
  }
  if (arrived == world_size) store.set(done_key, "1");
  const std::string keys[] = {done_key};
  store.wait(keys, timeout);
}

}  // namespace twinccl
