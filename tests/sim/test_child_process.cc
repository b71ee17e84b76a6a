// The SimGrid child process: a user's error comes back with its type and reason (never as "a
// failure inside SimGrid" with a backtrace), and the child dies with its parent.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "../../sim/src/replay_program.h"
#include "../../sim/src/simgrid_run.h"
#include "twinccl/errors.h"

using namespace twinccl;
using twinccl::sim::detail::run_in_child;

namespace {

// Gone: no such process, or a zombie that only waits for init to reap it.
bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!stat || !std::getline(stat, text)) return true;
  const std::size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] == 'Z';
}

}  // namespace

TEST_CASE(
    "simgrid child: a user's error comes back with its type and message, not as a SimGrid "
    "failure") {
  const auto config = []() -> std::vector<double> { throw ConfigError("t.json: ranks[1]: bad"); };
  CHECK_THROWS_AS(run_in_child(config, 1, "trace replay"), ConfigError);
  CHECK_THROWS_WITH(run_in_child(config, 1, "trace replay"), "t.json: ranks[1]: bad");
  const auto deadlock = []() -> std::vector<double> { throw DeadlockError("rank 3 is stuck"); };
  CHECK_THROWS_AS(run_in_child(deadlock, 1, "trace replay"), DeadlockError);
  CHECK_THROWS_WITH(run_in_child(deadlock, 1, "trace replay"), "rank 3 is stuck");
  const auto invalid = []() -> std::vector<double> {
    throw InvalidArgument("algorithm 'x' does not apply");
  };
  CHECK_THROWS_AS(run_in_child(invalid, 1, "trace replay"), InvalidArgument);
}

TEST_CASE(
    "simgrid child: a replay that never ends reports the stuck rank as DeadlockError, no "
    "backtrace") {
  // A program check_trace would refuse: rank 0 waits for an op it never issues.
  sim::detail::ReplayProgram p;
  p.flow.nranks = 1;
  p.members.push_back({.rank = 0, .instance = 0, .batch = 0, .steps = {}});
  p.instances.push_back({.members = {0}, .fixed_latency_s = 0.0});
  p.batches.push_back({.members = {0}, .previous = -1, .next = -1});
  p.rank_events = {{{sim::detail::ReplayEventKind::wait, 0, 0.0}}};
  const auto play = [&] { return sim::detail::play_replay_with_simgrid(p); };
  CHECK_THROWS_AS(run_in_child(play, p.time_values(), "trace replay"), DeadlockError);
  CHECK_THROWS_WITH(
      run_in_child(play, p.time_values(), "trace replay"),
      Catch::Contains("rank 0 is stuck") && !Catch::Contains("SimGrid") && !Catch::Contains("#"));
}

TEST_CASE("simgrid child: killing the parent kills its simulation within 2 s (no orphan)") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t parent = ::fork();
  REQUIRE(parent >= 0);
  if (parent == 0) {  // the parent to kill: runs a simulation that never ends
    ::close(pipe_fds[0]);
    try {
      run_in_child(
          [fd = pipe_fds[1]] {
            const pid_t me = ::getpid();
            if (::write(fd, &me, sizeof me) != static_cast<ssize_t>(sizeof me)) ::_exit(5);
            ::close(fd);
            for (;;) ::pause();
            return std::vector<double>{};
          },
          1, "long simulation");
    } catch (...) {
    }
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  pid_t child = 0;
  const bool got = ::read(pipe_fds[0], &child, sizeof child) == static_cast<ssize_t>(sizeof child);
  ::close(pipe_fds[0]);
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  REQUIRE(got);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  bool gone = process_gone(child);
  while (!gone && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    gone = process_gone(child);
  }
  if (!gone) ::kill(child, SIGKILL);  // leave nothing behind when the check fails
  CHECK(gone);
}
