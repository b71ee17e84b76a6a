// The store server: one Asio io_context on its own thread, one Session per connection.
//
// How it works: a session reads one frame at a time. The first byte may take forever (an idle
// client is fine); once it arrived, the rest of the frame must arrive within frame_timeout or the
// connection closes. The header is checked before the key and value are read, so a garbage or
// oversized frame costs 13 bytes of memory and its own connection, nothing else. A get/wait on a
// missing key parks the session in `waiters[key]` with a timer; a set/add of that key replies to
// every parked session. All state is touched only on the server thread, so it needs no lock.
//
//   client A: get("id") ----park----------------------------> reply "abc"
//   client B:            set("id","abc") -> ok     (wakes A)
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "store/asio.h"
#include "store/protocol.h"
#include "store/server_state.h"
#include "twinccl/errors.h"
#include "twinccl/tcp_store.h"

namespace twinccl {

namespace asio = boost::asio;
using asio::ip::tcp;
using store::Command;
using store::Status;

namespace store {

// Everything the server thread works with; sessions hold a reference to it.
struct ServerCore {
  explicit ServerCore(StoreServerOptions o) : options(std::move(o)) {}

  StoreServerOptions options;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  store::ServerState state;  // values, parked waiters, live sessions (server thread only)
  std::thread thread;
  int bound_port = 0;
  std::atomic<std::size_t> open{0};
  std::atomic<std::uint64_t> rejected{0};
  std::atomic<bool> stopped{false};

  void accept_next();
  void close_everything();
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(ServerCore& server, tcp::socket socket)
      : server_(server), socket_(std::move(socket)), frame_timer_(server.io), wait_timer_(server.io) {}

  void start() {
    server_.state.sessions.insert(this);
    ++server_.open;
    read_first_byte();
  }

  // Closes the connection and forgets every trace of this session in the server state.
  void close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    frame_timer_.cancel();
    wait_timer_.cancel();
    if (parked_) server_.state.unpark(key_, this);
    parked_ = false;
    server_.state.sessions.erase(this);
    --server_.open;
  }

  // A parked get/wait on `key_` can be answered: the key now holds `value`.
  void key_arrived(const std::string& value) {
    if (!parked_ || closed_) return;
    parked_ = false;
    ++wait_generation_;
    wait_timer_.cancel();
    reply(Status::ok, command_ == Command::get ? value : std::string());
  }

 private:
  void read_first_byte() {
    auto self = shared_from_this();
    asio::async_read(socket_, asio::buffer(header_.data(), 1),
                     [this, self](boost::system::error_code ec, std::size_t) {
                       if (ec || closed_) return close();
                       start_frame_timer();
                       read_rest_of_header();
                     });
  }

  void start_frame_timer() {
    ++frame_generation_;
    frame_timer_.expires_after(server_.options.frame_timeout);
    auto self = shared_from_this();
    frame_timer_.async_wait([this, self, gen = frame_generation_](boost::system::error_code ec) {
      if (ec || closed_ || gen != frame_generation_ || !reading_frame_) return;
      ++server_.rejected;  // stalled mid-frame
      close();
    });
    reading_frame_ = true;
  }

  void read_rest_of_header() {
    auto self = shared_from_this();
    asio::async_read(socket_, asio::buffer(header_.data() + 1, header_.size() - 1),
                     [this, self](boost::system::error_code ec, std::size_t) {
                       if (ec || closed_) return close();
                       std::string why;
                       auto h = decode_request(header_.data(), &why);
                       if (!h) {
                         ++server_.rejected;
                         return close();
                       }
                       request_ = *h;
                       read_body();
                     });
  }

  void read_body() {
    body_.resize(std::size_t{request_.key_bytes} + request_.value_bytes);
    auto self = shared_from_this();
    asio::async_read(socket_, asio::buffer(body_), [this, self](boost::system::error_code ec, std::size_t) {
      if (ec || closed_) return close();
      reading_frame_ = false;
      ++frame_generation_;
      frame_timer_.cancel();
      key_.assign(body_.data(), request_.key_bytes);
      std::string value(body_.data() + request_.key_bytes, request_.value_bytes);
      body_.clear();
      body_.shrink_to_fit();
      dispatch(std::move(value));
    });
  }

  void dispatch(std::string value) {
    command_ = request_.command;
    switch (command_) {
      case Command::set:
        server_.state.set(key_, std::move(value));
        return reply(Status::ok, {});
      case Command::add: {
        std::string error;
        auto sum = server_.state.add(key_, decode_i64(value), &error);
        if (!sum) return reply(Status::bad_request, error);
        return reply(Status::ok, encode_i64(*sum));
      }
      case Command::get:
      case Command::wait: {
        if (const std::string* found = server_.state.find(key_)) {
          return reply(Status::ok, command_ == Command::get ? *found : std::string());
        }
        return park();
      }
    }
  }

  void park() {
    auto wait = std::min<std::chrono::milliseconds>(std::chrono::milliseconds(request_.timeout_ms),
                                                    server_.options.max_wait);
    if (wait.count() <= 0) return reply(Status::timeout, {});
    parked_ = true;
    server_.state.park(key_, shared_from_this());
    ++wait_generation_;
    wait_timer_.expires_after(wait);
    auto self = shared_from_this();
    wait_timer_.async_wait([this, self, gen = wait_generation_](boost::system::error_code ec) {
      if (ec || closed_ || !parked_ || gen != wait_generation_) return;
      parked_ = false;
      server_.state.unpark(key_, this);
      reply(Status::timeout, {});
    });
  }

  void reply(Status status, std::string value) {
    const auto header = encode(ReplyHeader{status, static_cast<std::uint32_t>(value.size())});
    out_.resize(header.size() + value.size());
    std::memcpy(out_.data(), header.data(), header.size());
    if (!value.empty()) std::memcpy(out_.data() + header.size(), value.data(), value.size());
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(out_), [this, self](boost::system::error_code ec, std::size_t) {
      if (ec || closed_) return close();
      read_first_byte();
    });
  }

  ServerCore& server_;
  tcp::socket socket_;
  asio::steady_timer frame_timer_;
  asio::steady_timer wait_timer_;
  std::array<std::uint8_t, kRequestHeaderBytes> header_{};
  RequestHeader request_;
  Command command_ = Command::get;
  std::string key_;
  std::vector<char> body_;
  std::vector<std::uint8_t> out_;
  std::uint64_t frame_generation_ = 0;
  std::uint64_t wait_generation_ = 0;
  bool reading_frame_ = false;
  bool parked_ = false;
  bool closed_ = false;
};

void wake(const std::shared_ptr<Session>& session, const std::string& value) {
  session->key_arrived(value);
}

void close_session(Session* session) { session->close(); }

void ServerCore::accept_next() {
  acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      return accept_next();  // e.g. too many open files: keep serving the others
    }
    if (open.load() >= options.max_connections) {
      boost::system::error_code ignored;
      socket.close(ignored);
      ++rejected;
    } else {
      std::make_shared<store::Session>(*this, std::move(socket))->start();
    }
    accept_next();
  });
}

void ServerCore::close_everything() {
  boost::system::error_code ignored;
  acceptor.close(ignored);
  std::vector<store::Session*> live(state.sessions.begin(), state.sessions.end());
  for (store::Session* s : live) store::close_session(s);
  state.clear();
}

}  // namespace store

struct TcpStoreServer::Impl : store::ServerCore {
  using ServerCore::ServerCore;
};

TcpStoreServer::TcpStoreServer(StoreServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  const std::string where = impl_->options.host + ":" + std::to_string(impl_->options.port);
  if (impl_->options.port < 0 || impl_->options.port > 65535) {
    throw BackendError("store server: port " + std::to_string(impl_->options.port) +
                       " out of range [0, 65535] for " + where);
  }
  try {
    tcp::resolver resolver(impl_->io);
    auto endpoints = resolver.resolve(impl_->options.host, std::to_string(impl_->options.port),
                                      tcp::resolver::passive | tcp::resolver::numeric_service);
    tcp::endpoint endpoint = endpoints.begin()->endpoint();
    impl_->acceptor.open(endpoint.protocol());
    impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
    impl_->acceptor.bind(endpoint);
    impl_->acceptor.listen(asio::socket_base::max_listen_connections);
    impl_->bound_port = impl_->acceptor.local_endpoint().port();
  } catch (const boost::system::system_error& e) {
    throw BackendError("store server: cannot listen on " + where + ": " + e.code().message());
  }
  impl_->accept_next();
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

TcpStoreServer::~TcpStoreServer() { stop(); }

void TcpStoreServer::stop() {
  if (impl_->stopped.exchange(true)) return;
  asio::post(impl_->io, [impl = impl_.get()] {
    impl->close_everything();
    impl->io.stop();
  });
  if (impl_->thread.joinable()) impl_->thread.join();
}

int TcpStoreServer::port() const { return impl_->bound_port; }

std::string TcpStoreServer::address() const {
  return impl_->options.host + ":" + std::to_string(impl_->bound_port);
}

std::size_t TcpStoreServer::open_connections() const { return impl_->open.load(); }

std::uint64_t TcpStoreServer::rejected_frames() const { return impl_->rejected.load(); }

}  // namespace twinccl
