// Misuse scenarios 46-50 and 72 (docs/misuse.md): the emulator's own failure paths, part 2. Waiting
// inside an open group, an exception leaving a Group scope, threads that cannot be created, a
// rank that fails its own checks and returns, messages in the user's words. Each ends with a
// typed error carrying the real cause on every involved rank within the bound, never a hang.
#include <array>
#include <chrono>
#include <stdexcept>
#include <system_error>

#include "test_misuse_support.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

TEST_CASE("misuse 46: Work::wait() inside a group that is still open", "[emu][misuse][failure]") {
  int line = 0;
  auto out = misuse_run(2, [&](Communicator& c) {
    std::vector<float> x(4), y(4);
    int peer = 1 - c.rank();
    int at = __LINE__ + 1;
    c.group_start();
    if (c.rank() == 0) line = at;
    c.send(x.data(), 4, DataType::float32, peer);
    Work w = c.recv(y.data(), 4, DataType::float32, peer, {.async_op = true});
    if (c.rank() == 0) w.wait();  // the misuse: the group's operations are issued at group_end
    c.group_end();
  });
  INFO(out[0].message);
  CHECK(out[0].type == "InvalidArgument");
  CHECK_THAT(out[0].message,
             Contains("comm 'world' rank 0: wait() on a Work of the group opened by group_start (" +
                      site(__FILE__, line) + "), which is still open") &&
                 Contains("call group_end() before waiting"));
  INFO(out[1].message);
  CHECK(out[1].type == "AbortedError");  // waits in its group_end for rank 0: told why at once
  // "rank 0 failed: ..." (the world's abort) or "... (before returning, it failed: ...)" (rank 0
  // returned)
  CHECK_THAT(out[1].message,
             Contains("failed: comm 'world' rank 0: wait() on a Work of the group"));
}

TEST_CASE("misuse 47: an exception leaving a Group scope discards the group, later calls run",
          "[emu][misuse][failure]") {
  SECTION("the next blocking all_reduce really runs") {
    std::vector<float> got(2);
    std::vector<std::string> pending(2);
    int line = 0;
    auto out = misuse_run(2, [&](Communicator& c) {
      std::vector<float> x(4, 1.0f), y(4);
      Work in_group;
      try {
        int at = __LINE__ + 1;
        Group g(c);
        if (c.rank() == 0) line = at;
        c.all_reduce(x.data(), y.data(), 4, DataType::float32, ReduceOp::sum());
        in_group = c.send(x.data(), 4, DataType::float32, 1 - c.rank());
        throw std::runtime_error("the user's own error inside the group");
      } catch (const std::runtime_error&) {
      }
      try {
        in_group.wait();
      } catch (const AbortedError& e) {
        pending[static_cast<std::size_t>(c.rank())] = e.what();
      }
      std::vector<float> z(4, static_cast<float>(c.rank() + 1));
      c.all_reduce(z.data(), z.data(), 4, DataType::float32,
                   ReduceOp::sum());  // blocking: must run
      got[static_cast<std::size_t>(c.rank())] = z[3];
    });
    for (std::size_t r = 0; r < 2; ++r) {
      INFO(out[r].message);
      CHECK(out[r].type.empty());
      CHECK(got[r] == 3.0f);
      CHECK_THAT(pending[r], Contains("group on comm 'world' rank " + std::to_string(r) +
                                      " (group_start at ") &&
                                 Contains("was abandoned: an exception left the Group scope at ") &&
                                 Contains("its 2 operation(s) were discarded, never issued"));
    }
    CHECK_THAT(pending[0], Contains(site(__FILE__, line)));
  }
  SECTION("an enclosing group_end reports the inner scope's exception") {
    int outer_line = 0;
    auto out = misuse_run(2, [&](Communicator& c) {
      std::vector<float> x(4);
      int at = __LINE__ + 1;
      Group outer(c);
      if (c.rank() == 0) outer_line = at;
      try {
        Group inner(c);
        c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
        throw std::runtime_error("inner");
      } catch (const std::runtime_error&) {
      }
    });  // ~outer: group_end throws
    for (const auto& o : out) {
      INFO(o.message);
      CHECK(o.type == "InvalidArgument");
      CHECK_THAT(o.message,
                 Contains("group_end on comm 'world'") &&
                     Contains("was abandoned when an exception left the inner Group scope at") &&
                     Contains("1 operation(s) were discarded, never issued"));
      // The scope-exit group_end is named by the Group's line in the user's file (before: by
      // TwinCCL's own communicator.cc).
      CHECK_THAT(
          o.message,
          Contains("group_end on comm 'world' rank 0 (" + site(__FILE__, outer_line) + ")") ||
              Contains("group_end on comm 'world' rank 1 (" + site(__FILE__, outer_line) + ")"));
      CHECK_THAT(o.message, !Contains("communicator.cc"));
    }
  }
}

TEST_CASE("misuse 48: a thread that cannot be created is a ResourceError, every thread joined",
          "[emu][misuse][failure]") {
  auto refuse = [](const FaultPoint& p, int rank, std::string_view comm) {
    if (p.stage == FaultStage::thread_start && p.rank == rank && p.comm == comm) {
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "pthread_create");
    }
    return FaultAction::proceed;
  };
  SECTION("a rank's thread") {
    CaughtByRank caught(4);
    emu::EmulatorOptions o;
    o.world_size = 4;
    o.timeout_s = 10;
    o.fault_hook = [&](const FaultPoint& p) { return refuse(p, 2, ""); };
    auto start = std::chrono::steady_clock::now();
    std::string error;
    try {
      emu::run_world(o, [&](Communicator& c) { caught.run(c.rank(), [&] { c.barrier(); }); });
    } catch (const ResourceError& e) {
      error = e.what();
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < kEveryRankWithin_s);
    CHECK_THAT(error, Contains("could not start the thread of rank 2 of 4: pthread_create: "
                               "Resource temporarily unavailable") &&
                          Contains("thread limit"));
    for (int r : {0, 1}) {
      INFO(caught[r].message);
      CHECK(caught[r].type == "AbortedError");
      CHECK_THAT(caught[r].message, Contains("could not start the thread of rank 2 of 4"));
    }
  }
  SECTION("a communicator's stream worker") {
    CheckOptions o = with_timeout(10.0);
    o.fault_hook = [&](const FaultPoint& p) { return refuse(p, 1, "world"); };
    std::array<int, 3> lines{};
    std::string resource;
    auto out = misuse_run(
        3,
        [&](Communicator& c) {
          std::vector<float> x(4);
          try {
            lines[static_cast<std::size_t>(c.rank())] = __LINE__ + 1;
            Work w = c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum(),
                                  {.async_op = true});
            w.wait();
          } catch (const ResourceError& e) {
            resource = e.what();
            throw;
          }
        },
        o);
    CHECK_THAT(resource,
               Contains("all_reduce #0 on comm 'world' rank 1 (" + site(__FILE__, lines[1]) +
                        "): could not start the stream thread") &&
                   Contains("Resource temporarily unavailable"));
    for (int r : {0, 2}) {
      INFO(out[static_cast<std::size_t>(r)].message);
      CHECK(out[static_cast<std::size_t>(r)].type == "AbortedError");
      CHECK_THAT(out[static_cast<std::size_t>(r)].message,
                 Contains("could not start the stream thread"));
    }
  }
}

TEST_CASE("misuse 49: a rank that failed its own checks and returned: its peers are told why",
          "[emu][misuse][failure]") {
  SECTION("bad root") {
    CaughtByRank caught(4);
    std::array<int, 4> lines{};
    auto out = misuse_run(4, [&](Communicator& c) {
      std::vector<float> x(8);
      caught.run(c.rank(), [&] {
        lines[static_cast<std::size_t>(c.rank())] = __LINE__ + 1;
        c.broadcast(x.data(), x.data(), 8, DataType::float32, c.rank() == 1 ? 9 : 0);
      });
    });
    int line = lines[1];
    CHECK(caught[1].type == "InvalidArgument");
    for (int r : {0, 2, 3}) {
      INFO(caught[r].message);
      CHECK(caught[r].type == "AbortedError");
      // Two wordings, by timing: a rank still waiting ("for rank 1 to arrive, but rank 1's
      // function") or arriving after rank 1 returned ("waits for rank 1, whose function"); both
      // carry the cause.
      CHECK_THAT(caught[r].message,
                 Contains("broadcast #0 on comm 'world'") &&
                     (Contains("rank 1, whose function already returned without calling it") ||
                      Contains("rank 1's function already returned without calling it")) &&
                     Contains("(before returning, it failed: broadcast on comm 'world' rank 1 (" +
                              site(__FILE__, line) + "): root=9 out of range [0, 4))"));
    }
  }
  SECTION("buffer too small") {
    CaughtByRank caught(3);
    auto out = misuse_run(3, [&](Communicator& c) {
      Buffer send = c.alloc(4, DataType::float32),
             recv = c.alloc(c.rank() == 1 ? 11 : 12, DataType::float32);
      caught.run(c.rank(), [&] { c.all_gather(send, recv); });
    });
    for (int r : {0, 2}) {
      INFO(caught[r].message);
      CHECK(caught[r].type == "AbortedError");
      CHECK_THAT(caught[r].message,
                 Contains("it failed: all_gather on comm 'world' rank 1") &&
                     Contains("recv buffer holds 11 elements but the call needs 12"));
    }
  }
  SECTION("a peer waiting in recv") {
    CaughtByRank caught(2);
    auto out = misuse_run(
        2,
        [&](Communicator& c) {
          std::vector<float> x(4);
          caught.run(c.rank(), [&] {
            if (c.rank() == 0)
              c.recv(x.data(), 4, DataType::float32, 1);
            else
              c.send(x.data(), 4, DataType::float32, 7);  // peer out of range
          });
        },
        checks(CheckLevel::off));
    INFO(caught[0].message);
    CHECK(caught[0].type == "AbortedError");
    CHECK_THAT(caught[0].message, Contains("rank 0 waits in recv from rank 1 on comm 'world'") &&
                                      Contains("rank 1's function already returned") &&
                                      Contains("it failed: send on comm 'world' rank 1") &&
                                      Contains("peer=7 out of range"));
  }
}

TEST_CASE("misuse 50: messages name the user's call, not an internal function",
          "[emu][misuse][failure]") {
  auto out = misuse_run(2, [](Communicator& c) {
    std::vector<float> x(4);
    c.all_reduce(x.data(), x.data(), 4, DataType::float32,
                 ReduceOp{static_cast<ReduceKind>(42), 1.0});
  });
  for (const auto& o : out) {
    INFO(o.message);
    CHECK(o.type == "InvalidArgument");
    CHECK_THAT(
        o.message,
        Contains("all_reduce on comm 'world' rank") &&
            Contains(
                "reduce op value 42 is not a ReduceOp (sum, prod, min, max, avg, premul_sum)"));
    CHECK_THAT(o.message, !Contains("check_reduce_op_supported"));
  }
}

TEST_CASE("misuse 48b: a world larger than the emulator's cap is refused before any thread starts",
          "[emu][misuse][failure]") {
  for (int n : {0, -3, kMaxEmulatedRanks + 1, 100000}) {
    emu::EmulatorOptions o;
    o.world_size = n;
    bool ran = false;
    std::string error;
    try {
      emu::run_world(o, [&](Communicator&) { ran = true; });
    } catch (const ConfigError& e) {
      error = e.what();
    }
    INFO("world_size " << n << ": " << error);
    CHECK_FALSE(ran);
    CHECK_THAT(error, Contains("world_size=" + std::to_string(n) + " must be in [1, " +
                               std::to_string(kMaxEmulatedRanks) + "]") &&
                          Contains("threads"));
  }
}

TEST_CASE("split inside a group or with a color below kNoColor: refused in NCCL's backend's words",
          "[emu][misuse][groups]") {
  // The Communicator base class checks split's arguments for every backend (before: the emulator
  // said "not allowed inside a group", naming no group_start).
  CaughtByRank in_group(2), bad_color(2);
  int line = 0;
  auto out = misuse_run(2, [&](Communicator& c) {
    int at = __LINE__ + 1;
    c.group_start();
    if (c.rank() == 0) line = at;
    in_group.run(c.rank(), [&] { c.split(0, c.rank()); });
    c.group_end();
    bad_color.run(c.rank(), [&] { c.split(-5, c.rank()); });
  });
  for (const auto& r : out) CHECK(r.type.empty());
  for (int r = 0; r < 2; ++r) {
    INFO(in_group[r].message);
    CHECK(in_group[r].type == "InvalidArgument");
    CHECK_THAT(in_group[r].message,
               Contains("split on comm 'world' rank " + std::to_string(r) + " (") &&
                   Contains("split inside the group opened at " + site(__FILE__, line) +
                            " (call group_end first)"));
    CHECK(bad_color[r].type == "InvalidArgument");
    CHECK_THAT(bad_color[r].message, Contains("color=-5 is negative; use kNoColor to opt out"));
  }
}

TEST_CASE("misuse 72: a split communicator dropped with its group still open is reported",
          "[emu][misuse][groups]") {
  // Every rank opens a group on its sub-communicator, queues an all_reduce and drops the
  // communicator without group_end. Before: nothing was said on any rank (the all_reduce was
  // never issued, its output left unwritten) and the group's Work never completed (test() false
  // forever, so a program polling it spun without end).
  std::vector<int> done_after_drop(2, -1);
  std::vector<std::string> work_error(2);
  std::vector<float> out(2, -1.0f);
  std::string run_error;
  int line = 0;
  auto outcomes = misuse_run(
      2,
      [&](Communicator& c) {
        const auto r = static_cast<std::size_t>(c.rank());
        std::vector<float> x(4, 1.0f), y(4, 0.0f);
        auto sub = c.split(0, c.rank(), "sub");
        int at = __LINE__ + 1;
        sub->group_start();
        if (r == 0) line = at;
        Work w = sub->all_reduce(x.data(), y.data(), 4, DataType::float32, ReduceOp::sum(),
                                 {.async_op = true});
        sub.reset();  // the misuse: the group is never ended
        done_after_drop[r] = w.test() ? 1 : 0;
        try {
          w.wait();
        } catch (const Error& e) {
          work_error[r] = e.what();
        }
        c.barrier();  // the world goes on
        out[r] = y[0];
      },
      with_timeout(10.0), &run_error);
  for (std::size_t r = 0; r < 2; ++r) {
    INFO("rank " << r << ": " << outcomes[r].type << ": " << outcomes[r].message);
    CHECK(outcomes[r].type.empty());  // reported when the function returned, as a never-waited Work
    CHECK(done_after_drop[r] == 1);
    CHECK(out[r] == 0.0f);  // never issued: nothing written
    CHECK_THAT(work_error[r], Contains("group_start on comm 'sub' rank " + std::to_string(r)) &&
                                  Contains("was never closed by group_end: its 1 operation(s) "
                                           "were not issued before the communicator was "
                                           "destroyed"));
  }
  INFO(run_error);
  CHECK_THAT(run_error, Contains("group_start on comm 'sub' rank") &&
                            Contains("before the communicator was destroyed") &&
                            Contains("call it before dropping the communicator"));
  CHECK_THAT(work_error[0], Contains(site(__FILE__, line)));
}
