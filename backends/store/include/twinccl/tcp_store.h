// The bootstrap key-value store: rank 0 serves it over TCP, every rank is a client
// (MASTER_ADDR/MASTER_PORT as torchrun). NCCL's unique id travels through it.
//
//   twinccl::TcpStoreServer server({.host = "127.0.0.1", .port = 0});   // 0: ephemeral port
//   twinccl::TcpStoreClient store("127.0.0.1", server.port());
//   store.set("nccl/id", id_bytes);  std::string id = store.get("nccl/id");  // get blocks until
//   set
//
// Keys are 1..1024 bytes, values at most 1 MiB (bytes, not text). Every wait has a deadline on
// both sides: get/wait give up with TimeoutError naming the store's host:port and the key.
// Failures to connect, send or receive, and a full store, are BackendError with the same naming.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace twinccl {

struct StoreServerOptions {
  std::string host = "127.0.0.1";  // interface to listen on; "0.0.0.0" for every IPv4 one
  int port = 0;                    // 0: the system picks a free port (see TcpStoreServer::port)
  // A frame whose first byte arrived must be complete within this, and a reply must be taken
  // by the client within this; else the connection closes.
  std::chrono::milliseconds frame_timeout{10'000};
  // A connection with no request under way for this long is closed (the client reconnects).
  std::chrono::milliseconds idle_timeout{60'000};
  // Longest a get/wait may be parked on the server, whatever the client asked for.
  std::chrono::milliseconds max_wait{3'600'000};
  // At this many connections a new one first evicts the longest-idle connection; when none is
  // idle (all mid-frame, parked or being answered) the new one is closed at once.
  std::size_t max_connections = 1024;
  // Bytes of unfinished frames held for all connections together; the connection whose bytes
  // would pass it is closed. Bodies are read as they arrive, never sized from the header.
  std::size_t max_pending_bytes = std::size_t{64} << 20;
  // Keys plus values stored; a set/add past it is refused with an error naming the cap.
  std::size_t max_stored_bytes = std::size_t{64} << 20;
};

// Serves the store on its own thread (one Asio io_context, one session per connection) from
// construction until destruction or stop(). Misbehaving clients (garbage, oversized or truncated
// frames, stalls, idling, vanishing while parked, sending while parked) lose their own
// connection only.
class TcpStoreServer {
 public:
  // Throws BackendError naming host:port when it cannot listen there.
  explicit TcpStoreServer(StoreServerOptions options = {});
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  int port() const;             // the bound port (useful with port 0)
  std::string address() const;  // "host:port"
  // Closes every connection and joins the server thread; idempotent.
  void stop();

  // Observability, mostly for tests: connections open now, frames rejected so far (bad or
  // stalled frames, over the pending budget, sent while parked), bytes of unfinished frames
  // held now, bytes stored now.
  std::size_t open_connections() const;
  std::uint64_t rejected_frames() const;
  std::size_t pending_bytes() const;
  std::size_t stored_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct StoreClientOptions {
  // How long to keep retrying to connect (rank 0 may start its server after the others).
  std::chrono::milliseconds connect_timeout{30'000};
  // Default deadline of get/wait, and of every request's reply.
  std::chrono::milliseconds timeout{300'000};
};

// One connection to the store. Calls are serialised (safe from several threads, one at a time).
// After a transport error or a timeout the connection is dropped and the next call reconnects.
class TcpStoreClient {
 public:
  // Connects now (retrying until connect_timeout). Throws TimeoutError/BackendError.
  TcpStoreClient(std::string host, int port, StoreClientOptions options = {});
  ~TcpStoreClient();
  TcpStoreClient(const TcpStoreClient&) = delete;
  TcpStoreClient& operator=(const TcpStoreClient&) = delete;

  void set(std::string_view key, std::string_view value);
  // Blocks until `key` is set; TimeoutError after `timeout` (default: options.timeout).
  std::string get(std::string_view key);
  std::string get(std::string_view key, std::chrono::milliseconds timeout);
  // Blocks until every key is set; one deadline for all of them.
  void wait(std::span<const std::string> keys);
  void wait(std::span<const std::string> keys, std::chrono::milliseconds timeout);
  // Adds `delta` to the counter at `key` (missing = 0) and returns the new value.
  std::int64_t add(std::string_view key, std::int64_t delta);

  const std::string& address() const;  // "host:port"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Every one of `world_size` callers blocks until all arrived (a counter under `name` plus a
// "<name>/done" key set by the last). Use a fresh name per barrier.
void store_barrier(TcpStoreClient& store, std::string_view name, int world_size,
                   std::chrono::milliseconds timeout);

}  // namespace twinccl
