// Misuse scenarios 14-24 (docs/misuse.md): programs that would hang on real GPUs. A cycle in the
// wait-for graph gives every rank of the cycle a DeadlockError describing it; a rank that returned
// or never arrives gives the others an AbortedError or a TimeoutError saying where each rank
// stands.
#include <array>
#include <chrono>
#include <thread>

#include "test_misuse_support.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

void check_deadlock(const RankOutcome& o, const std::vector<std::string>& parts) {
  INFO(o.type << ": " << o.message);
  // DeadlockError; rarely, under heavy load, the abort that the first condemned rank's failure
  // caused reaches a rank first: its AbortedError then carries the same cycle.
  CHECK((o.type == "DeadlockError" ||
         (o.type == "AbortedError" && o.message.find("failed: deadlock: ") != std::string::npos)));
  CHECK_THAT(o.message, Contains("deadlock: "));
  for (const auto& p : parts) CHECK_THAT(o.message, Contains(p));
}

}  // namespace

TEST_CASE("misuse 14: two ranks each in a blocking recv from the other",
          "[emu][misuse][deadlock]") {
  std::array<int, 2> line{};
  auto out = misuse_run(2, [&](Communicator& c) {
    std::vector<float> x(4);
    int peer = 1 - c.rank();
    line[static_cast<std::size_t>(c.rank())] = __LINE__ + 1;
    c.recv(x.data(), 4, DataType::float32, peer);
    c.send(x.data(), 4, DataType::float32, peer);
  });
  for (const auto& o : out) {
    check_deadlock(
        o, {"rank 0 waits in recv from rank 1 on comm 'world' (" + site(__FILE__, line[0]) + ")",
            "rank 1 waits in recv from rank 0 on comm 'world' (" + site(__FILE__, line[1]) + ")",
            "while"});
  }
}

TEST_CASE("misuse 15: blocking sends to each other outside a group (NCCL deadlocks)",
          "[emu][misuse][deadlock]") {
  auto out = misuse_run(2, [](Communicator& c) {
    std::vector<float> x(4), y(4);
    int peer = 1 - c.rank();
    c.send(x.data(), 4, DataType::float32, peer);  // needs the peer's recv: it is in its own send
    c.recv(y.data(), 4, DataType::float32, peer);
  });
  for (const auto& o : out) {
    check_deadlock(
        o, {"rank 0 waits in send to rank 1", "rank 1 waits in send to rank 0", "to receive"});
  }
}

TEST_CASE("misuse 16: collectives on two communicators in opposite orders",
          "[emu][misuse][deadlock]") {
  auto out = misuse_run(2, [](Communicator& c) {
    auto other = c.split(0, c.rank(), "other");
    std::vector<float> x(4);
    Communicator& first = c.rank() == 0 ? c : *other;
    Communicator& second = c.rank() == 0 ? *other : c;
    first.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
    second.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
  });
  for (const auto& o : out) {
    check_deadlock(o, {"rank 0 waits in all_reduce #1 on comm 'world'", "for rank 1 to arrive",
                       "rank 1 waits in all_reduce #0 on comm 'other'", "for rank 0 to arrive"});
  }
}

TEST_CASE("misuse 17: a collective on one rank, a recv from it on the other",
          "[emu][misuse][deadlock]") {
  auto out = misuse_run(2, [](Communicator& c) {
    std::vector<float> x(4);
    if (c.rank() == 0)
      c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
    else
      c.recv(x.data(), 4, DataType::float32, 0);
  });
  for (const auto& o : out) {
    check_deadlock(
        o, {"rank 0 waits in all_reduce #0 on comm 'world'", "rank 1 waits in recv from rank 0"});
  }
}

TEST_CASE("misuse 18: a ring of blocking recvs", "[emu][misuse][deadlock]") {
  int n = GENERATE(3, 7);
  auto out = misuse_run(n, [n](Communicator& c) {
    std::vector<float> x(4);
    int left = (c.rank() + n - 1) % n;
    c.recv(x.data(), 4, DataType::float32, left);
    c.send(x.data(), 4, DataType::float32, (c.rank() + 1) % n);
  });
  for (const auto& o : out) {
    check_deadlock(
        o, {"rank 0 waits in recv from rank " + std::to_string(n - 1),
            "rank 1 waits in recv from rank 0",
            "rank " + std::to_string(n - 1) + " waits in recv from rank " + std::to_string(n - 2)});
  }
}

TEST_CASE("misuse 19: waiting on an async recv whose send comes after a barrier",
          "[emu][misuse][deadlock]") {
  auto out = misuse_run(2, [](Communicator& c) {
    std::vector<float> x(4);
    if (c.rank() == 0) {
      Work w = c.recv(x.data(), 4, DataType::float32, 1, {.async_op = true});
      w.wait();
      c.barrier();
    } else {
      c.barrier();
      c.send(x.data(), 4, DataType::float32, 0);
    }
  });
  for (const auto& o : out) {
    check_deadlock(
        o, {"rank 0 waits in recv from rank 1", "rank 1 waits in barrier #0 on comm 'world'"});
  }
}

TEST_CASE("misuse 20: groups holding only recvs on both sides", "[emu][misuse][deadlock]") {
  auto out = misuse_run(2, [](Communicator& c) {
    std::vector<float> x(4);
    c.group_start();
    c.recv(x.data(), 4, DataType::float32, 1 - c.rank());
    c.group_end();
  });
  for (const auto& o : out) check_deadlock(o, {"waits in recv from rank"});
}

TEST_CASE("misuse 21: a rank returns while the others wait in a collective",
          "[emu][misuse][hang]") {
  auto out = misuse_run(4, [](Communicator& c) {
    if (c.rank() == 2) return;
    c.barrier();
  });
  CHECK(out[2].type.empty());
  for (int r : {0, 1, 3}) {
    INFO(out[static_cast<std::size_t>(r)].message);
    CHECK(out[static_cast<std::size_t>(r)].type == "AbortedError");
    CHECK_THAT(out[static_cast<std::size_t>(r)].message, Contains("barrier #0 on comm 'world'") &&
                                                             Contains("rank 2") &&
                                                             Contains("already returned"));
  }
}

TEST_CASE("misuse 22: a rank returns while its peer waits in recv from it", "[emu][misuse][hang]") {
  auto out = misuse_run(2, [](Communicator& c) {
    std::vector<float> x(4);
    if (c.rank() == 0) c.recv(x.data(), 4, DataType::float32, 1);
  });
  CHECK(out[1].type.empty());
  INFO(out[0].message);
  CHECK(out[0].type == "AbortedError");
  CHECK_THAT(out[0].message, Contains("rank 0 waits in recv from rank 1 on comm 'world'") &&
                                 Contains("rank 1's function already returned"));
}

TEST_CASE(
    "misuse 23: a rank that never arrives: timeout says who is missing and where every rank stands",
    "[emu][misuse][hang]") {
  std::array<int, 1> line{};
  auto out = misuse_run(
      3,
      [&](Communicator& c) {
        std::vector<float> x(4);
        int at = __LINE__ + 1;
        c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
        if (c.rank() == 0) line[0] = at;
        if (c.rank() == 2)
          std::this_thread::sleep_for(std::chrono::milliseconds(900));  // busy elsewhere
        c.barrier();
      },
      with_timeout(0.3));
  for (int r : {0, 1}) {
    const auto& m = out[static_cast<std::size_t>(r)].message;
    INFO(m);
    // Its own timeout, or the abort caused by a peer's timeout a few ms earlier (same text inside).
    const std::string& type = out[static_cast<std::size_t>(r)].type;
    CHECK((type == "TimeoutError" || type == "AbortedError"));
    CHECK_THAT(
        m, Contains("barrier #1 on comm 'world'") && Contains("waited for rank(s) 2 to arrive") &&
               Contains("TWINCCL_TIMEOUT_S") && Contains("where every rank stands") &&
               Contains(
                   "rank 2: running its own code [last operation: all_reduce #0 on comm 'world' (" +
                   site(__FILE__, line[0]) + "), completed]"));
  }
  CHECK(out[2].type == "AbortedError");  // it arrives after the others gave up
}

TEST_CASE("misuse 24: a straggler within the timeout is not an error", "[emu][misuse][fault]") {
  CheckOptions o = with_timeout(5.0);
  o.fault_hook = [](const FaultPoint& p) {
    if (p.rank == 1 && p.stage == FaultStage::before_collective)
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return FaultAction::proceed;
  };
  std::vector<float> got(4);
  auto out = misuse_run(
      4,
      [&](Communicator& c) {
        std::vector<float> x(5, static_cast<float>(c.rank()));
        c.all_reduce(x.data(), x.data(), 5, DataType::float32, ReduceOp::sum());
        got[static_cast<std::size_t>(c.rank())] = x[4];
      },
      o);
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(out[r].type.empty());
    CHECK(got[r] == 6.0f);
  }
}
