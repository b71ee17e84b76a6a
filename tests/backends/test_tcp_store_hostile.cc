// The bootstrap store against clients that hold its resources (issue 9): clients that vanish
// while parked, idle connections, bodies announced but not sent, and a store filled up. Real
// sockets on loopback; each test names the lock-out it guards against.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backends/test_tcp_store_raw.h"
#include "twinccl/errors.h"
#include "twinccl/tcp_store.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using twinccl::TcpStoreClient;
using twinccl::TcpStoreServer;
using twinccl::test::frame;
using twinccl::test::header;
using twinccl::test::RawClient;
using twinccl::test::serving;

namespace {

constexpr std::uint8_t kSet = 1, kGet = 2;

// Polls `done` every 10 ms until it holds or `limit` passes (a hang check, not a timing one).
template <class Condition>
bool within(std::chrono::milliseconds limit, Condition done) {
  const auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

TEST_CASE("store hostile: clients that vanish while parked free their connection at once",
          "[store]") {
  TcpStoreServer server({.max_connections = 8});
  for (int i = 0; i < 8; ++i) {
    RawClient gone(server.port());
    REQUIRE(gone.connected());
    gone.send_bytes(frame(kGet, "never-set/" + std::to_string(i), "", 3'600'000));  // an hour
  }  // every one closes its socket while its get is parked
  CHECK(within(2000ms, [&] { return server.open_connections() == 0; }));
  CHECK(serving(server.port(), "after-vanished-waiters"));
}

TEST_CASE("store hostile: a client that sends while its get is parked is cut off", "[store]") {
  TcpStoreServer server;
  RawClient eager(server.port());
  REQUIRE(eager.connected());
  eager.send_bytes(frame(kGet, "later", "", 60'000));
  std::this_thread::sleep_for(50ms);
  eager.send_bytes(frame(kSet, "later", "x"));  // must wait for the reply first
  CHECK(eager.closed_by_server(2000ms));
  CHECK(server.rejected_frames() == 1);
  CHECK(serving(server.port(), "after-eager"));
}

TEST_CASE("store hostile: idle connections are closed after idle_timeout", "[store]") {
  TcpStoreServer server({.idle_timeout = 300ms});
  RawClient idle(server.port());
  REQUIRE(idle.connected());
  CHECK(idle.closed_by_server(3000ms));
  CHECK(server.rejected_frames() == 0);  // idling is allowed, just not forever
  // A well-behaved client that pauses longer than idle_timeout reconnects by itself.
  TcpStoreClient client("127.0.0.1", server.port(), {.connect_timeout = 2000ms, .timeout = 2000ms});
  client.set("k", "v1");
  std::this_thread::sleep_for(700ms);
  CHECK(client.get("k") == "v1");
  std::this_thread::sleep_for(700ms);
  client.set("k", "v2");
  CHECK(client.add("n", 2) == 2);
  CHECK(client.get("k") == "v2");
}

TEST_CASE("store hostile: idle connections cannot lock out a new client", "[store]") {
  TcpStoreServer server({.max_connections = 4});  // idle_timeout stays at its default (60 s)
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<RawClient>(server.port()));
    REQUIRE(idle.back()->connected());
    std::this_thread::sleep_for(20ms);
  }
  REQUIRE(within(2000ms, [&] { return server.open_connections() == 4; }));
  CHECK(serving(server.port(), "while-full-of-idle"));
  CHECK(idle.front()->closed_by_server(2000ms));  // the longest idle made room
}

TEST_CASE("store hostile: an announced body is not allocated before it arrives", "[store]") {
  TcpStoreServer server;
  const std::size_t before = resident_bytes();
  std::vector<std::unique_ptr<RawClient>> liars;
  for (int i = 0; i < 100; ++i) {  // each announces 1 MiB and sends 4 bytes of it
    liars.push_back(std::make_unique<RawClient>(server.port()));
    REQUIRE(liars.back()->connected());
    auto f = header(kSet, 1, 1u << 20);
    f.insert(f.end(), {'k', 'v', 'v', 'v', 'v'});
    liars.back()->send_bytes(f);
  }
  REQUIRE(within(2000ms, [&] { return server.pending_bytes() == 100 * (13 + 5); }));
  const std::size_t grown = resident_bytes() - std::min(before, resident_bytes());
  INFO("resident growth " << grown << " bytes for 100 announced MiB");
  CHECK(grown < (std::size_t{30} << 20));
  CHECK(serving(server.port(), "during-announced-bodies"));
}

TEST_CASE("store hostile: unfinished frames of all connections share one byte budget", "[store]") {
  TcpStoreServer server({.max_pending_bytes = 300'000});
  const std::string chunk(100'000, 'x');
  std::vector<std::unique_ptr<RawClient>> senders;
  for (int i = 0; i < 2; ++i) {  // 2 x ~100 kB in flight: within the budget
    senders.push_back(std::make_unique<RawClient>(server.port()));
    auto f = header(kSet, 1, 1u << 20);
    f.push_back('k');
    f.insert(f.end(), chunk.begin(), chunk.end());
    senders.back()->send_bytes(f);
  }
  REQUIRE(within(2000ms, [&] { return server.pending_bytes() > 200'000; }));
  RawClient third(server.port());
  auto f = header(kSet, 1, 1u << 20);
  f.push_back('k');
  f.insert(f.end(), chunk.begin(), chunk.end());
  f.insert(f.end(), chunk.begin(), chunk.end());  // would bring ~400 kB in flight
  third.send_bytes(f);
  CHECK(third.closed_by_server(2000ms));
  CHECK_FALSE(senders[0]->closed_by_server(100ms));
  CHECK(server.pending_bytes() <= 300'000);
  CHECK(serving(server.port(), "after-budget"));
}

TEST_CASE("store hostile: the stored bytes are capped with an error naming the cap", "[store]") {
  TcpStoreServer server({.max_stored_bytes = 1000});
  TcpStoreClient client("127.0.0.1", server.port(), {.connect_timeout = 2000ms, .timeout = 2000ms});
  client.set("a", std::string(600, 'a'));
  try {
    client.set("b", std::string(600, 'b'));
    FAIL("a set past the cap was accepted");
  } catch (const twinccl::BackendError& e) {
    CHECK_THAT(e.what(), Catch::Contains("set('b')") && Catch::Contains("store full") &&
                             Catch::Contains("limit 1000 bytes"));
  }
  CHECK(server.stored_bytes() == 601);
  client.set("a", std::string(900, 'A'));  // replacing is counted as the difference
  CHECK_THROWS_AS(client.set("c", std::string(200, 'c')), twinccl::BackendError);
  client.set("a", "small");  // shrinking is always allowed, and frees room
  client.set("c", std::string(200, 'c'));
  CHECK(client.get("c").size() == 200);
  CHECK(client.add("n", 5) == 5);
  CHECK(server.stored_bytes() == 1 + 5 + 1 + 200 + 1 + 1);
}
