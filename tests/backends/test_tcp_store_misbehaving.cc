// The bootstrap store against clients that break the protocol: garbage, oversized length
// prefixes, truncated frames, stalls, too many connections. Each loses its own connection; the
// server keeps serving everybody else. Raw POSIX sockets, so the frames are built by hand here
// (which also pins the wire format: 'T' 'S' | cmd u8 | key u16 | value u32 | timeout u32, LE).
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backends/test_tcp_store_raw.h"
#include "twinccl/errors.h"
#include "twinccl/tcp_store.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using twinccl::StoreServerOptions;
using twinccl::TcpStoreClient;
using twinccl::TcpStoreServer;
using twinccl::test::header;
using twinccl::test::RawClient;
using twinccl::test::serving;

namespace {

void check_serving(int port, const std::string& tag) {
  INFO(tag);
  CHECK(serving(port, tag));
}

}  // namespace

TEST_CASE("store misuse: a well-formed raw set is accepted (wire format check)", "[store]") {
  TcpStoreServer server;
  RawClient raw(server.port());
  REQUIRE(raw.connected());
  auto frame = header(1, 3, 2);
  for (char c : std::string("keyv1")) frame.push_back(static_cast<std::uint8_t>(c));
  raw.send_bytes(frame);
  CHECK_FALSE(raw.closed_by_server(200ms));  // a reply arrives, the connection stays open
  TcpStoreClient c("127.0.0.1", server.port());
  CHECK(c.get("key", 1000ms) == "v1");
  CHECK(server.rejected_frames() == 0);
}

TEST_CASE("store misuse: garbage bytes close only that connection", "[store]") {
  TcpStoreServer server;
  RawClient raw(server.port());
  REQUIRE(raw.connected());
  raw.send_bytes({'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P', '/', '1', '.', '1', '\r', '\n',
                  '\r', '\n'});
  CHECK(raw.closed_by_server(2000ms));
  CHECK(server.rejected_frames() == 1);
  check_serving(server.port(), "after-garbage");
}

TEST_CASE("store misuse: oversized length prefixes are refused without allocating", "[store]") {
  TcpStoreServer server;
  SECTION("value length 4 GiB") {
    RawClient raw(server.port());
    REQUIRE(raw.connected());
    raw.send_bytes(header(1, 1, 0xFFFFFFFFu));
    CHECK(raw.closed_by_server(2000ms));
  }
  SECTION("value one byte past 1 MiB") {
    RawClient raw(server.port());
    REQUIRE(raw.connected());
    raw.send_bytes(header(1, 1, (1u << 20) + 1));
    CHECK(raw.closed_by_server(2000ms));
  }
  SECTION("key of 1025 bytes") {
    RawClient raw(server.port());
    REQUIRE(raw.connected());
    raw.send_bytes(header(2, 1025, 0));
    CHECK(raw.closed_by_server(2000ms));
  }
  SECTION("empty key") {
    RawClient raw(server.port());
    REQUIRE(raw.connected());
    raw.send_bytes(header(2, 0, 0));
    CHECK(raw.closed_by_server(2000ms));
  }
  SECTION("unknown command") {
    RawClient raw(server.port());
    REQUIRE(raw.connected());
    raw.send_bytes(header(99, 1, 0));
    CHECK(raw.closed_by_server(2000ms));
  }
  SECTION("add with a 3-byte delta") {
    RawClient raw(server.port());
    REQUIRE(raw.connected());
    auto frame = header(3, 1, 3);
    frame.insert(frame.end(), {'c', 1, 2, 3});
    raw.send_bytes(frame);
    CHECK(raw.closed_by_server(2000ms));
  }
  CHECK(server.rejected_frames() == 1);
  check_serving(server.port(), "after-oversize");
}

TEST_CASE("store misuse: truncated frames then hang-ups leave the server serving", "[store]") {
  TcpStoreServer server;
  for (std::size_t cut : {1u, 5u, 12u, 13u, 15u}) {
    RawClient raw(server.port());
    REQUIRE(raw.connected());
    auto frame = header(1, 4, 4);
    frame.insert(frame.end(), {'k', 'e', 'y', 's', 'v', 'a', 'l', 'u'});
    frame.resize(cut);
    raw.send_bytes(frame);
  }  // each closes its socket mid-frame
  check_serving(server.port(), "after-truncation");
  TcpStoreClient c("127.0.0.1", server.port());
  CHECK_THROWS_AS(c.get("keys", 50ms), twinccl::TimeoutError);  // no half frame was applied
}

TEST_CASE("store misuse: a client stalled mid-frame is cut off after frame_timeout", "[store]") {
  TcpStoreServer server({.frame_timeout = 300ms});
  RawClient stalled(server.port());
  REQUIRE(stalled.connected());
  stalled.send_bytes({'T', 'S', 1, 4});  // 4 of 13 header bytes, then silence
  RawClient idle(server.port());         // connects and never sends: allowed to idle
  REQUIRE(idle.connected());
  // Others are served while the stall lasts.
  const auto t0 = Clock::now();
  check_serving(server.port(), "during-stall");
  CHECK(Clock::now() - t0 < 250ms);
  CHECK(stalled.closed_by_server(3000ms));
  CHECK(server.rejected_frames() == 1);
  CHECK_FALSE(idle.closed_by_server(100ms));
  check_serving(server.port(), "after-stall");
}

TEST_CASE("store misuse: connections past max_connections are closed at once", "[store]") {
  TcpStoreServer server({.max_connections = 2});
  RawClient a(server.port());
  REQUIRE(a.connected());
  RawClient b(server.port());
  REQUIRE(b.connected());
  // Both parked on a missing key (not idle, so neither may be evicted for the newcomer).
  a.send_bytes(twinccl::test::frame(2, "missing", "", 60000));
  b.send_bytes(twinccl::test::frame(4, "missing", "", 60000));
  std::this_thread::sleep_for(50ms);  // let the server register both
  RawClient c(server.port());
  REQUIRE(c.connected());
  CHECK(c.closed_by_server(2000ms));
  CHECK_FALSE(a.closed_by_server(50ms));
  CHECK(server.open_connections() == 2);
}

TEST_CASE("store misuse: random garbage from many clients at once", "[store]") {
  TcpStoreServer server({.frame_timeout = 200ms});
  std::vector<std::thread> fuzzers;
  for (int t = 0; t < 8; ++t) {
    fuzzers.emplace_back([&, t] {
      std::mt19937 rng(static_cast<std::uint32_t>(1234 + t));
      for (int i = 0; i < 20; ++i) {
        RawClient raw(server.port());
        std::vector<std::uint8_t> junk(rng() % 64 + 1);
        for (auto& byte : junk) byte = static_cast<std::uint8_t>(rng());
        if (i % 3 == 0)
          junk[0] = 'T', junk[1 % junk.size()] = 'S';  // sometimes pass the magic check
        raw.send_bytes(junk);
      }
    });
  }
  std::atomic<int> answered{0};
  std::thread good([&] {
    for (int i = 0; i < 20; ++i)
      answered += serving(server.port(), "fuzz-" + std::to_string(i)) ? 1 : 0;
  });
  for (auto& th : fuzzers) th.join();
  good.join();
  CHECK(answered == 20);
  check_serving(server.port(), "after-fuzz");
}

TEST_CASE("store misuse: stop() returns promptly with idle and stalled clients connected",
          "[store]") {
  auto server = std::make_unique<TcpStoreServer>(StoreServerOptions{.frame_timeout = 60000ms});
  RawClient idle(server->port());
  REQUIRE(idle.connected());
  RawClient stalled(server->port());
  REQUIRE(stalled.connected());
  stalled.send_bytes({'T', 'S'});
  std::this_thread::sleep_for(50ms);
  const auto t0 = Clock::now();
  server.reset();
  CHECK(Clock::now() - t0 < 1000ms);
  CHECK(idle.closed_by_server(1000ms));
  CHECK(stalled.closed_by_server(1000ms));
}
