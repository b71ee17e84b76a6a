// The bootstrap store on loopback with well-behaved clients: set/get, blocking get, timeouts,
// counters, barriers, many clients at once, clean shutdown.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "twinccl/errors.h"
#include "twinccl/tcp_store.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using twinccl::StoreClientOptions;
using twinccl::TcpStoreClient;
using twinccl::TcpStoreServer;

namespace {

StoreClientOptions quick(std::chrono::milliseconds timeout = 5000ms) {
  return {.connect_timeout = 2000ms, .timeout = timeout};
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

TEST_CASE("store: set then get returns the same bytes, including zero bytes", "[store]") {
  TcpStoreServer server;
  REQUIRE(server.port() > 0);
  TcpStoreClient client("127.0.0.1", server.port(), quick());
  const std::string binary("a\0b\xff\x01z", 6);
  client.set("k", binary);
  CHECK(client.get("k") == binary);
  client.set("k", "second");  // overwrite
  CHECK(client.get("k") == "second");
  client.set("empty", "");
  CHECK(client.get("empty").empty());
  const std::string big(1 << 20, 'x');  // exactly the 1 MiB limit
  client.set("big", big);
  CHECK(client.get("big") == big);
  CHECK(client.address() == "127.0.0.1:" + std::to_string(server.port()));
}

TEST_CASE("store: many client threads exchange values", "[store]") {
  TcpStoreServer server;
  const int threads = GENERATE(1, 2, 7, 32);
  std::vector<std::thread> pool;
  std::atomic<int> bad{0};
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      TcpStoreClient c("127.0.0.1", server.port(), quick());
      c.set("rank/" + std::to_string(t), "value-" + std::to_string(t * 7));
      for (int peer = 0; peer < threads; ++peer) {
        if (c.get("rank/" + std::to_string(peer)) != "value-" + std::to_string(peer * 7)) ++bad;
      }
    });
  }
  for (auto& th : pool) th.join();
  CHECK(bad == 0);
}

TEST_CASE("store: get before set blocks, then returns the value", "[store]") {
  TcpStoreServer server;
  TcpStoreClient setter("127.0.0.1", server.port(), quick());
  std::string got;
  double waited_ms = 0;
  std::thread getter([&] {
    TcpStoreClient c("127.0.0.1", server.port(), quick());
    auto t0 = Clock::now();
    got = c.get("late");
    waited_ms = ms_since(t0);
  });
  std::this_thread::sleep_for(150ms);
  setter.set("late", "finally");
  getter.join();
  CHECK(got == "finally");
  CHECK(waited_ms >= 100);
  CHECK(waited_ms < 3000);
}

TEST_CASE("store: get of a key never set times out with a clear message", "[store]") {
  TcpStoreServer server;
  TcpStoreClient c("127.0.0.1", server.port(), quick());
  auto t0 = Clock::now();
  try {
    c.get("nccl/unique_id", 200ms);
    FAIL("get did not time out");
  } catch (const twinccl::TimeoutError& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains("127.0.0.1:" + std::to_string(server.port())));
    CHECK_THAT(what, Catch::Contains("nccl/unique_id"));
    CHECK_THAT(what, Catch::Contains("200 ms"));
  }
  const double ms = ms_since(t0);
  CHECK(ms >= 190);
  CHECK(ms < 2000);
  c.set("after", "ok");  // the connection is still usable after a timeout
  CHECK(c.get("after") == "ok");
}

TEST_CASE("store: the server caps a wait at max_wait", "[store]") {
  TcpStoreServer server({.max_wait = 150ms});
  TcpStoreClient c("127.0.0.1", server.port(), quick(60000ms));
  auto t0 = Clock::now();
  CHECK_THROWS_AS(c.get("never"), twinccl::TimeoutError);
  CHECK(ms_since(t0) < 2000);
}

TEST_CASE("store: wait for several keys, set one by one", "[store]") {
  TcpStoreServer server;
  TcpStoreClient c("127.0.0.1", server.port(), quick());
  std::thread setter([&] {
    TcpStoreClient s("127.0.0.1", server.port(), quick());
    for (int i = 0; i < 3; ++i) {
      std::this_thread::sleep_for(30ms);
      s.set("w" + std::to_string(i), "x");
    }
  });
  const std::vector<std::string> keys = {"w0", "w1", "w2"};
  CHECK_NOTHROW(c.wait(keys));
  setter.join();
  const std::vector<std::string> missing = {"w0", "nope"};
  CHECK_THROWS_AS(c.wait(missing, 100ms), twinccl::TimeoutError);
}

TEST_CASE("store: add is an atomic counter", "[store]") {
  TcpStoreServer server;
  const int threads = 16;
  const int adds = 50;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      TcpStoreClient c("127.0.0.1", server.port(), quick());
      for (int i = 0; i < adds; ++i) c.add("counter", 1);
    });
  }
  for (auto& th : pool) th.join();
  TcpStoreClient c("127.0.0.1", server.port(), quick());
  CHECK(c.add("counter", 0) == threads * adds);
  CHECK(c.get("counter") == std::to_string(threads * adds));
  CHECK(c.add("neg", -5) == -5);
  CHECK(c.add("neg", 2) == -3);
  c.set("text", "not a number");
  CHECK_THROWS_AS(c.add("text", 1), twinccl::BackendError);
  CHECK(c.get("text") == "not a number");  // the failed add changed nothing, connection still fine
}

TEST_CASE("store: barrier releases everyone only when all arrived", "[store]") {
  TcpStoreServer server;
  const int world = GENERATE(1, 3, 8);
  std::atomic<int> arrived{0};
  std::atomic<int> early{0};
  std::vector<std::thread> pool;
  for (int r = 0; r < world; ++r) {
    pool.emplace_back([&, r] {
      TcpStoreClient c("127.0.0.1", server.port(), quick());
      std::this_thread::sleep_for(std::chrono::milliseconds(10 * r));
      ++arrived;
      twinccl::store_barrier(c, "barrier/1", world, 5000ms);
      if (arrived.load() != world) ++early;
    });
  }
  for (auto& th : pool) th.join();
  CHECK(early == 0);
}

TEST_CASE("store: bad keys and values are refused before sending", "[store]") {
  TcpStoreServer server;
  TcpStoreClient c("127.0.0.1", server.port(), quick());
  CHECK_THROWS_AS(c.set("", "x"), twinccl::InvalidArgument);
  CHECK_THROWS_AS(c.set(std::string(1025, 'k'), "x"), twinccl::InvalidArgument);
  CHECK_NOTHROW(c.set(std::string(1024, 'k'), "x"));
  CHECK_THROWS_AS(c.set("v", std::string((1 << 20) + 1, 'v')), twinccl::InvalidArgument);
  CHECK(c.get(std::string(1024, 'k')) == "x");
}

TEST_CASE("store: connecting to a port nobody serves gives up with host:port", "[store]") {
  int port = 0;
  {
    TcpStoreServer server;
    port = server.port();
  }  // closed again: nothing listens on `port` now
  auto t0 = Clock::now();
  try {
    TcpStoreClient c("127.0.0.1", port, {.connect_timeout = 300ms, .timeout = 1000ms});
    FAIL("connected to a closed port");
  } catch (const twinccl::TimeoutError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("127.0.0.1:" + std::to_string(port)));
  }
  CHECK(ms_since(t0) < 2000);
  CHECK_THROWS_AS(TcpStoreClient("127.0.0.1", 0), twinccl::InvalidArgument);
}

TEST_CASE("store: a client started before the server connects once it is up", "[store]") {
  int port = 0;
  {
    TcpStoreServer probe;
    port = probe.port();
  }
  std::string got;
  std::thread early([&] {
    TcpStoreClient c("127.0.0.1", port, {.connect_timeout = 5000ms, .timeout = 5000ms});
    got = c.get("id");
  });
  std::this_thread::sleep_for(100ms);
  TcpStoreServer server({.port = port});
  TcpStoreClient c("127.0.0.1", port, quick());
  c.set("id", "xyz");
  early.join();
  CHECK(got == "xyz");
}

TEST_CASE("store: listening on a busy port names it", "[store]") {
  TcpStoreServer first;
  try {
    TcpStoreServer second({.port = first.port()});
    // SO_REUSEADDR does not allow two listeners on Linux; reaching here would be a surprise.
    FAIL("second server bound a busy port");
  } catch (const twinccl::BackendError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains(std::to_string(first.port())));
  }
}

TEST_CASE("store: stopping the server releases a parked get at once", "[store]") {
  auto server = std::make_unique<TcpStoreServer>();
  const int port = server->port();
  std::atomic<bool> threw{false};
  double ms = 0;
  std::thread getter([&] {
    TcpStoreClient c("127.0.0.1", port, quick(30000ms));
    auto t0 = Clock::now();
    try {
      c.get("never");
    } catch (const twinccl::BackendError& e) {
      threw = std::string(e.what()).find("never") != std::string::npos;
    }
    ms = ms_since(t0);
  });
  std::this_thread::sleep_for(100ms);
  auto t0 = Clock::now();
  server.reset();
  CHECK(ms_since(t0) < 1000);
  getter.join();
  CHECK(threw);
  CHECK(ms < 3000);
}
