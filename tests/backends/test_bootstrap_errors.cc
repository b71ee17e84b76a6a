// exchange_unique_id's failures, in one process (ranks as threads, explicit generations): every
// one is a typed error naming what is missing, within its deadline.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "backends/test_bootstrap_agent_store.h"
#include "twinccl/bootstrap.h"
#include "twinccl/errors.h"
#include "twinccl/tcp_store.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

twinccl::LaunchEnvironment rank_env(int rank, int world, int port) {
  twinccl::LaunchEnvironment env;
  env.launcher = twinccl::Launcher::slurm;
  env.rank = rank;
  env.world_size = world;
  env.local_rank = rank;
  env.local_world_size = world;
  env.master_port = port;
  env.master_port_origin = "test";
  env.job_key = "test";
  return env;
}

auto bytes(char c) {
  return [c] { return std::string(16, c); };
}

}  // namespace

TEST_CASE("bootstrap errors: ranks as threads agree, twice", "[bootstrap]") {
  twinccl::TcpStoreServer probe;  // a free port for rank 0 to serve on
  const int port = probe.port();
  probe.stop();
  for (std::uint64_t generation : {1u, 2u}) {
    std::vector<std::string> got(3);
    std::vector<std::thread> ranks;
    for (int r = 0; r < 3; ++r) {
      ranks.emplace_back([&, r] {
        got[static_cast<std::size_t>(r)] = twinccl::exchange_unique_id(
            rank_env(r, 3, port), 16, bytes(static_cast<char>('a' + generation)), 10s, generation);
      });
    }
    for (auto& t : ranks) t.join();
    CHECK(got[0] == std::string(16, static_cast<char>('a' + generation)));
    CHECK(got[1] == got[0]);
    CHECK(got[2] == got[0]);
  }
}

TEST_CASE("bootstrap errors: a rank whose rank 0 never comes times out naming the store",
          "[bootstrap]") {
  twinccl::TcpStoreServer probe;
  const int port = probe.port();
  probe.stop();
  const auto t0 = Clock::now();
  try {
    twinccl::exchange_unique_id(rank_env(1, 2, port), 16, bytes('x'), 500ms, 1);
    FAIL("no error");
  } catch (const twinccl::Error& e) {  // TimeoutError (nobody listens) or BackendError
    CHECK_THAT(e.what(), Catch::Contains(std::to_string(port)));
  }
  CHECK(Clock::now() - t0 < 10s);
}

TEST_CASE("bootstrap errors: rank 0 alone names how many ranks read the id", "[bootstrap]") {
  twinccl::TcpStoreServer probe;
  const int port = probe.port();
  probe.stop();
  CHECK_THROWS_WITH(twinccl::exchange_unique_id(rank_env(0, 3, port), 16, bytes('x'), 500ms, 1),
                    Catch::Contains("only 0 of the 2 other ranks read the unique id"));
}

TEST_CASE("bootstrap errors: rank 0's port is taken by another job", "[bootstrap]") {
  twinccl::TcpStoreServer other_job;
  CHECK_THROWS_WITH(
      twinccl::exchange_unique_id(rank_env(0, 2, other_job.port()), 16, bytes('x'), 500ms, 1),
      Catch::Contains("cannot serve the bootstrap store on port " +
                      std::to_string(other_job.port())) &&
          Catch::Contains("set MASTER_PORT to a free port"));
}

TEST_CASE("bootstrap errors: a generator of the wrong size, and a bad timeout", "[bootstrap]") {
  auto env = rank_env(0, 1, 1);
  CHECK(twinccl::exchange_unique_id(env, 16, bytes('y'), 1s, 1) == std::string(16, 'y'));
  CHECK_THROWS_AS(twinccl::exchange_unique_id(env, 8, bytes('y'), 1s, 1), twinccl::InvalidArgument);
  CHECK_THROWS_AS(twinccl::exchange_unique_id(env, 16, bytes('y'), 0ms, 1),
                  twinccl::InvalidArgument);
}

TEST_CASE("bootstrap errors: an agent store that never gets the id times out", "[bootstrap]") {
  twinccl::test::FakeAgentStore agent;
  auto env = rank_env(1, 2, agent.port());
  env.agent_store = true;
  const auto t0 = Clock::now();
  CHECK_THROWS_AS(twinccl::exchange_unique_id(env, 16, bytes('x'), 300ms, 1),
                  twinccl::TimeoutError);
  CHECK(Clock::now() - t0 < 5s);
  agent.put("twinccl/test/nccl_id/2", "short");  // not an id: another program's value
  CHECK_THROWS_WITH(twinccl::exchange_unique_id(env, 16, bytes('x'), 1s, 2),
                    Catch::Contains("holds 5 bytes"));
}
