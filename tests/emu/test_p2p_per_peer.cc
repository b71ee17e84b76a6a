// EmulatorOptions::p2p_per_peer_streams: send/recv on one stream per (peer, direction), as torch's
// ProcessGroupNCCL (docs/python.md). The default (NCCL: one stream per communicator) is unchanged.
#include <array>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "test_misuse_support.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

CheckOptions per_peer() {
  CheckOptions o = with_timeout(10.0);
  o.p2p_per_peer_streams = true;
  return o;
}

float value(int rank, int k) { return static_cast<float>(100 * rank + k); }

// Every rank posts its irecv from the previous rank, then its isend to the next one. The buffers
// are the rank's own: after a DeadlockError the isend queued behind the failed irecv is cancelled
// (test_cancel.cc), so no peer reads them once unwinding freed them (ASan saw it before).
void irecv_first_ring(Communicator& c, std::vector<float>& got) {
  int n = c.size(), r = c.rank();
  std::vector<float> mine(5);
  for (int k = 0; k < 5; ++k) mine[static_cast<std::size_t>(k)] = value(r, k);
  got.assign(5, -1.0f);
  Work in = c.recv(got.data(), 5, DataType::float32, (r + n - 1) % n, {.async_op = true});
  Work out = c.send(mine.data(), 5, DataType::float32, (r + 1) % n, {.async_op = true});
  in.wait();
  out.wait();
}

void check_ring(const std::vector<std::vector<float>>& got) {
  int n = static_cast<int>(got.size());
  for (int r = 0; r < n; ++r) {
    for (int k = 0; k < 5; ++k)
      CHECK(got[static_cast<std::size_t>(r)][static_cast<std::size_t>(k)] ==
            value((r + n - 1) % n, k));
  }
}

}  // namespace

TEST_CASE("p2p per peer: the irecv-first ring is a deadlock on one stream (NCCL, the default)",
          "[emu][p2p_per_peer]") {
  auto out = misuse_run(3, [](Communicator& c) {
    std::vector<float> got;
    irecv_first_ring(c, got);
  });
  // The condemned rank's failure breaks the cycle: the others may then finish or be aborted.
  int condemned = 0;
  for (const auto& o : out) condemned += o.type == "DeadlockError" ? 1 : 0;
  CHECK(condemned >= 1);
}

TEST_CASE("p2p per peer: the irecv-first ring gives the right data", "[emu][p2p_per_peer]") {
  int n = GENERATE(2, 3, 8);
  std::vector<std::vector<float>> got(static_cast<std::size_t>(n));
  auto out = misuse_run(
      n, [&](Communicator& c) { irecv_first_ring(c, got[static_cast<std::size_t>(c.rank())]); },
      per_peer());
  for (const auto& o : out) CHECK(o.type.empty());
  check_ring(got);
}

TEST_CASE("p2p per peer: messages of one pair arrive in order, groups included",
          "[emu][p2p_per_peer]") {
  std::array<std::vector<float>, 4> got;
  std::array<float, 2> reduced{};  // checked after the run: Catch's assertions are not for ranks
  auto out = misuse_run(
      2,
      [&](Communicator& c) {
        std::array<std::vector<float>, 4> mine;
        for (int m = 0; m < 4; ++m) mine[static_cast<std::size_t>(m)].assign(3, value(m, 0));
        std::vector<float> x(4, static_cast<float>(c.rank() + 1));
        if (c.rank() == 0) {
          Work a = c.send(mine[0].data(), 3, DataType::float32, 1, {.async_op = true});
          Work b = c.send(mine[1].data(), 3, DataType::float32, 1, {.async_op = true});
          c.group_start();
          c.send(mine[2].data(), 3, DataType::float32, 1);
          c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
          c.group_end();
          c.send(mine[3].data(), 3, DataType::float32, 1);  // blocking, last
          b.wait();
          a.wait();
        } else {
          for (auto& g : got) g.assign(3, -1.0f);
          c.group_start();
          c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
          for (int m = 0; m < 3; ++m)
            c.recv(got[static_cast<std::size_t>(m)].data(), 3, DataType::float32, 0);
          Work w = c.group_end({.async_op = true});
          w.wait();
          c.recv(got[3].data(), 3, DataType::float32, 0);
        }
        reduced[static_cast<std::size_t>(c.rank())] = x[0];
      },
      per_peer());
  for (const auto& o : out) CHECK(o.type.empty());
  for (float r : reduced) CHECK(r == 3.0f);
  for (int m = 0; m < 4; ++m) CHECK(got[static_cast<std::size_t>(m)][2] == value(m, 0));
}

TEST_CASE("p2p per peer: a peer still computing with a collective queued is no deadlock",
          "[emu][p2p_per_peer]") {
  // Rank 0's recv waits for rank 1, whose stream holds an all_reduce waiting for rank 0: not a
  // cycle, since rank 1's send does not queue behind that all_reduce (its thread issues it).
  std::array<float, 2> reduced{};  // checked after the run: Catch's assertions are not for ranks
  auto out = misuse_run(
      2,
      [&](Communicator& c) {
        std::vector<float> x(4, 1.0f), y(4, 0.0f);
        if (c.rank() == 0) {
          c.recv(y.data(), 4, DataType::float32, 1);
          c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
        } else {
          Work ar = c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum(), {true});
          std::this_thread::sleep_for(std::chrono::milliseconds(150));  // several checker polls
          c.send(y.data(), 4, DataType::float32, 0);
          ar.wait();
        }
        reduced[static_cast<std::size_t>(c.rank())] = x[0];
      },
      per_peer());
  for (const auto& o : out) {
    INFO(o.type << ": " << o.message);
    CHECK(o.type.empty());
  }
  for (float r : reduced) CHECK(r == 2.0f);
}

TEST_CASE("p2p per peer: true deadlocks are still found", "[emu][p2p_per_peer][deadlock]") {
  SECTION("both ranks wait on an irecv nobody sends") {
    std::array<int, 2> line{};
    auto out = misuse_run(
        2,
        [&](Communicator& c) {
          std::vector<float> x(4);
          line[static_cast<std::size_t>(c.rank())] = __LINE__ + 1;
          Work w = c.recv(x.data(), 4, DataType::float32, 1 - c.rank(), {.async_op = true});
          w.wait();
        },
        per_peer());
    for (const auto& o : out) {
      INFO(o.type << ": " << o.message);
      CHECK((o.type == "DeadlockError" || o.type == "AbortedError"));
      CHECK_THAT(o.message, Contains("deadlock: "));
      CHECK_THAT(o.message, Contains("waits in recv from rank 1 on comm 'world' (" +
                                     site(__FILE__, line[0]) + ")"));
    }
  }
  SECTION("a ring of blocking sends (a blocking send waits for its recv)") {
    auto out = misuse_run(
        3,
        [](Communicator& c) {
          std::vector<float> x(4);
          int n = c.size();
          c.send(x.data(), 4, DataType::float32, (c.rank() + 1) % n);
          c.recv(x.data(), 4, DataType::float32, (c.rank() + n - 1) % n);
        },
        per_peer());
    for (const auto& o : out) {
      INFO(o.type << ": " << o.message);
      CHECK_THAT(o.message, Contains("deadlock: "));
      CHECK_THAT(o.message, Contains("to receive"));
    }
  }
}

namespace {

// Threads of this process now (Linux /proc/self/status; -1 elsewhere).
int threads_now() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

}  // namespace

TEST_CASE("p2p per peer: lane threads end when idle (an all-to-all leaves none behind)",
          "[emu][p2p_per_peer][threads]") {
  const int n = 16;  // 16 x 30 lanes
  const int before = threads_now();
  if (before < 0) return;  // no /proc: nothing to count
  std::array<int, 2> during{}, after{};
  std::vector<std::vector<float>> got(static_cast<std::size_t>(n));
  auto out = misuse_run(
      n,
      [&](Communicator& c) {
        const auto r = static_cast<std::size_t>(c.rank());
        std::vector<float> mine(static_cast<std::size_t>(n), static_cast<float>(c.rank()));
        got[r].assign(static_cast<std::size_t>(n), -1.0f);
        std::vector<Work> works;
        for (int q = 0; q < n; ++q) {  // every irecv first, then every isend
          if (q != c.rank())
            works.push_back(c.recv(&got[r][static_cast<std::size_t>(q)], 1, DataType::float32, q,
                                   {.async_op = true}));
        }
        for (int q = 0; q < n; ++q) {
          if (q != c.rank())
            works.push_back(c.send(&mine[static_cast<std::size_t>(q)], 1, DataType::float32, q,
                                   {.async_op = true}));
        }
        c.barrier();  // every rank issued everything: many lane threads are alive
        if (c.rank() == 0) during[0] = threads_now();
        for (Work& w : works) w.wait();
        c.barrier();
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // idle lanes end meanwhile
        if (c.rank() == 0) after[0] = threads_now();
        c.barrier();
      },
      per_peer());
  for (const auto& o : out) CHECK(o.type.empty());
  for (int r = 0; r < n; ++r) {
    for (int q = 0; q < n; ++q) {
      if (q != r)
        CHECK(got[static_cast<std::size_t>(r)][static_cast<std::size_t>(q)] ==
              static_cast<float>(q));
    }
  }
  INFO("threads before " << before << ", with sends in flight " << during[0] << ", idle "
                         << after[0]);
  // The rank threads (and their main streams' workers, if any) are alive; no lane thread is.
  CHECK(after[0] <= before + 2 * n);  // 16 x 30 lane threads stayed before they ended when idle
}

TEST_CASE("p2p per peer: more lane threads than allowed is a ConfigError naming the option",
          "[emu][p2p_per_peer][threads]") {
  SECTION("every rank's irecv from every peer in flight") {
    emu::EmulatorOptions o;
    o.world_size = 4;
    o.timeout_s = 10;
    o.p2p_per_peer_streams = true;
    o.max_p2p_lane_threads = 4;          // 4 ranks x 3 irecvs in flight need 12
    std::array<std::string, 4> refused;  // checked after the run
    auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(
        emu::run_world(o,
                       [&](Communicator& c) {
                         std::vector<float> x(16);  // the rank's own buffers
                         std::vector<Work> works;
                         try {
                           for (int q = 0; q < 4; ++q) {
                             if (q == c.rank()) continue;
                             works.push_back(c.recv(x.data() + 4 * q, 4, DataType::float32, q,
                                                    {.async_op = true}));
                           }
                         } catch (const ConfigError& e) {
                           refused[static_cast<std::size_t>(c.rank())] = e.what();
                           throw;
                         }
                         for (Work& w : works) w.wait();
                       }),
        Error);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < kEveryRankWithin_s);
    int named = 0;
    for (const std::string& text : refused) {
      INFO(text);
      if (text.empty()) continue;
      ++named;
      CHECK_THAT(text, Contains("comm 'world' rank ") && Contains("'s lane of recvs from rank ") &&
                           Contains("needs a thread: p2p_per_peer_streams runs one thread per "
                                    "(peer, direction) with send/recv in flight, and this run "
                                    "already has 4 (max_p2p_lane_threads = 4: "
                                    "TWINCCL_MAX_P2P_LANE_THREADS, "
                                    "twinccl.run(max_p2p_lane_threads=...), "
                                    "EmulatorOptions::max_p2p_lane_threads)"));
    }
    CHECK(named >= 1);
  }
  SECTION("a bound outside [1, kMaxP2pLaneThreads]") {
    for (int bad : {0, -1, kMaxP2pLaneThreads + 1}) {
      emu::EmulatorOptions o;
      o.world_size = 2;
      o.max_p2p_lane_threads = bad;
      CHECK_THROWS_AS(emu::run_world(o, [](Communicator&) {}), ConfigError);
      CHECK_THROWS_WITH(emu::run_world(o, [](Communicator&) {}),
                        Contains("EmulatorOptions::max_p2p_lane_threads=" + std::to_string(bad) +
                                 " must be in [1, 1048576]"));
    }
  }
}
