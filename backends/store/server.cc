// The store server: one Asio io_context on its own thread, one Session per connection.
//
// How it works: a session reads whatever the socket has (at most 8 KiB at a time) and feeds it
// to its FrameParser, which keeps only what really arrived; the bytes held by unfinished frames
// of all sessions are counted against max_pending_bytes. A complete frame goes to ServerState
// (set/add/get/wait); the session is then busy until its reply is written, or parked when a
// get/wait names a missing key. One timer per session holds its current deadline:
//   idle     no request under way            -> idle_timeout, then closed (client reconnects)
//   frame    first byte of a frame arrived    -> frame_timeout to complete it
//   write    a reply is being sent           -> frame_timeout for the client to take it
// A parked session keeps a read posted, so a client that vanishes (EOF, reset, keepalive) is
// unparked at once; a client that sends while its get is parked breaks the protocol (one
// request at a time) and is closed. At max_connections a newcomer evicts the longest-idle
// session. All state is touched only on the server thread, so it needs no lock.
//
//   client A: get("id") ----park----------------------------> reply "abc"
//   client B:            set("id","abc") -> ok     (wakes A)
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "store/asio.h"
#include "store/frame_parser.h"
#include "store/protocol.h"
#include "store/server_state.h"
#include "twinccl/errors.h"
#include "twinccl/tcp_store.h"

namespace twinccl {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace store {

class Session;

// Everything the server thread works with; sessions hold a reference to it.
struct ServerCore {
  explicit ServerCore(StoreServerOptions o)
      : options(std::move(o)), state(options.max_stored_bytes) {}

  StoreServerOptions options;
  asio::io_context io;
  tcp::acceptor acceptor{io};
  ServerState state;              // values and parked waiters (server thread only)
  std::set<Session*> sessions;    // live sessions (server thread only)
  std::size_t pending_total = 0;  // bytes of unfinished frames (server thread only)
  std::thread thread;
  int bound_port = 0;
  std::atomic<std::size_t> open{0};
  std::atomic<std::uint64_t> rejected{0};
  std::atomic<std::size_t> pending{0};  // copies for other threads
  std::atomic<std::size_t> stored{0};
  std::atomic<bool> stopped{false};

  void accept_next();
  bool evict_longest_idle();
  void close_everything();
};

class Session : public Waiter, public std::enable_shared_from_this<Session> {
 public:
  Session(ServerCore& server, tcp::socket socket)
      : server_(server), socket_(std::move(socket)), deadline_(server.io), wait_timer_(server.io) {}

  void start() {
    server_.sessions.insert(this);
    ++server_.open;
    keep_alive();
    process();
  }

  // Closes the connection and forgets every trace of this session in the server state.
  void close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    deadline_.cancel();
    wait_timer_.cancel();
    if (parked_) server_.state.unpark(key_, this);
    parked_ = false;
    server_.pending_total -= accounted_;
    server_.pending = server_.pending_total;
    accounted_ = 0;
    server_.sessions.erase(this);
    --server_.open;
  }

  void key_arrived(const Value& value) override {
    if (!parked_ || closed_) return;
    parked_ = false;
    ++wait_generation_;
    wait_timer_.cancel();
    reply(Status::ok, command_ == Command::get ? value : nullptr);
  }

  bool idle() const {
    return !closed_ && !busy_ && begin_ == end_ && parser_.state() == FrameParser::State::idle;
  }
  Clock::time_point idle_since() const { return idle_since_; }

 private:
  enum class Deadline { idle, frame, write };

  void keep_alive() {
    boost::system::error_code ignored;
    socket_.set_option(asio::socket_base::keep_alive(true), ignored);
#ifdef TCP_KEEPIDLE
    const int idle_s = 30, interval_s = 10, probes = 3;  // a silent peer is gone within ~60 s
    const int fd = socket_.native_handle();
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof interval_s);
    (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
#endif
  }

  void arm(Deadline kind, std::chrono::milliseconds after) {
    ++deadline_generation_;
    deadline_.expires_after(after);
    auto self = shared_from_this();
    deadline_.async_wait(
        [this, self, kind, gen = deadline_generation_](boost::system::error_code ec) {
          if (ec || closed_ || gen != deadline_generation_) return;
          if (kind != Deadline::idle)
            ++server_.rejected;  // stalled mid-frame or not reading replies
          close();
        });
  }

  void disarm() {
    ++deadline_generation_;
    deadline_.cancel();
  }

  // Posts a read when none is under way and every received byte was used.
  void read_more() {
    if (reading_ || closed_ || begin_ != end_) return;
    reading_ = true;
    auto self = shared_from_this();
    socket_.async_read_some(
        asio::buffer(buffer_), [this, self](boost::system::error_code ec, std::size_t n) {
          reading_ = false;
          if (closed_) return;
          if (ec) return close();  // EOF or reset: the client left (also while parked)
          if (parked_) {
            ++server_.rejected;  // sent while its get/wait was parked: one request at a time
            return close();
          }
          begin_ = 0;
          end_ = n;
          process();
        });
  }

  // Feeds received bytes to the parser and serves every complete frame, one at a time.
  void process() {
    while (!closed_ && !busy_ && begin_ < end_) {
      const bool was_idle = parser_.state() == FrameParser::State::idle;
      begin_ += parser_.feed(buffer_.data() + begin_, end_ - begin_);
      if (was_idle && parser_.state() != FrameParser::State::idle)
        arm(Deadline::frame, server_.options.frame_timeout);
      if (parser_.state() == FrameParser::State::rejected || !account_pending()) {
        ++server_.rejected;
        return close();
      }
      if (parser_.state() == FrameParser::State::complete) {
        Frame frame = parser_.take();
        account_pending();
        serve(std::move(frame));
      }
    }
    if (closed_) return;
    if (!busy_ && parser_.state() == FrameParser::State::idle && begin_ == end_) {
      idle_since_ = Clock::now();
      arm(Deadline::idle, server_.options.idle_timeout);
    }
    read_more();
  }

  // False when this session's unfinished frame pushes all sessions past max_pending_bytes.
  bool account_pending() {
    const std::size_t now = parser_.buffered_bytes();
    server_.pending_total = server_.pending_total - accounted_ + now;
    server_.pending = server_.pending_total;
    accounted_ = now;
    return server_.pending_total <= server_.options.max_pending_bytes;
  }

  void serve(Frame frame) {
    busy_ = true;
    disarm();
    Outcome out = server_.state.handle(frame);
    server_.stored = server_.state.stored_bytes();
    if (!out.park) return reply(out.status, out.value);
    if (begin_ != end_) {
      ++server_.rejected;  // bytes sent behind a get/wait that must wait: one request at a time
      return close();
    }
    command_ = frame.header.command;
    key_ = std::move(frame.key);
    park(std::chrono::milliseconds(frame.header.timeout_ms));
  }

  void park(std::chrono::milliseconds asked) {
    const auto wait = std::min(asked, server_.options.max_wait);
    if (wait.count() <= 0) return reply(Status::timeout, nullptr);
    parked_ = true;
    server_.state.park(key_, shared_from_this());
    ++wait_generation_;
    wait_timer_.expires_after(wait);
    auto self = shared_from_this();
    wait_timer_.async_wait([this, self, gen = wait_generation_](boost::system::error_code ec) {
      if (ec || closed_ || !parked_ || gen != wait_generation_) return;
      parked_ = false;
      server_.state.unpark(key_, this);
      reply(Status::timeout, nullptr);
    });
    read_more();  // notices a client that leaves while parked
  }

  void reply(Status status, Value value) {
    reply_value_ = std::move(value);
    const std::size_t bytes = reply_value_ ? reply_value_->size() : 0;
    reply_header_ = encode(ReplyHeader{status, static_cast<std::uint32_t>(bytes)});
    std::array<asio::const_buffer, 2> out = {
        asio::buffer(reply_header_),
        asio::buffer(reply_value_ ? reply_value_->data() : nullptr, bytes)};
    arm(Deadline::write, server_.options.frame_timeout);
    auto self = shared_from_this();
    asio::async_write(socket_, out, [this, self](boost::system::error_code ec, std::size_t) {
      if (closed_) return;
      if (ec) return close();
      reply_value_.reset();
      busy_ = false;
      disarm();
      process();  // bytes that arrived behind this request, then the next read
    });
  }

  ServerCore& server_;
  tcp::socket socket_;
  asio::steady_timer deadline_;
  asio::steady_timer wait_timer_;
  std::array<std::uint8_t, 8192> buffer_{};
  std::size_t begin_ = 0;  // received bytes not yet fed: buffer_[begin_, end_)
  std::size_t end_ = 0;
  FrameParser parser_;
  std::size_t accounted_ = 0;  // this session's share of server_.pending_total
  std::array<std::uint8_t, kReplyHeaderBytes> reply_header_{};
  Value reply_value_;
  Command command_ = Command::get;
  std::string key_;
  Clock::time_point idle_since_ = Clock::now();
  std::uint64_t deadline_generation_ = 0;
  std::uint64_t wait_generation_ = 0;
  bool reading_ = false;
  bool busy_ = false;  // a request is being answered (or parked)
  bool parked_ = false;
  bool closed_ = false;
};

bool ServerCore::evict_longest_idle() {
  Session* oldest = nullptr;
  for (Session* s : sessions) {
    if (s->idle() && (oldest == nullptr || s->idle_since() < oldest->idle_since())) oldest = s;
  }
  if (oldest == nullptr) return false;
  oldest->close();
  return true;
}

void ServerCore::accept_next() {
  acceptor.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
      return accept_next();  // e.g. too many open files: keep serving the others
    }
    if (open.load() >= options.max_connections && !evict_longest_idle()) {
      boost::system::error_code ignored;
      socket.close(ignored);
      ++rejected;
    } else {
      std::make_shared<Session>(*this, std::move(socket))->start();
    }
    accept_next();
  });
}

void ServerCore::close_everything() {
  boost::system::error_code ignored;
  acceptor.close(ignored);
  std::vector<Session*> live(sessions.begin(), sessions.end());
  for (Session* s : live) s->close();
  state.clear();
}

}  // namespace store

struct TcpStoreServer::Impl : store::ServerCore {
  using ServerCore::ServerCore;
};

TcpStoreServer::TcpStoreServer(StoreServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
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

std::size_t TcpStoreServer::pending_bytes() const { return impl_->pending.load(); }

std::size_t TcpStoreServer::stored_bytes() const { return impl_->stored.load(); }

}  // namespace twinccl
