// Misuse scenarios 25-30 (docs/misuse.md): fault injection for resilience tests. A rank that
// throws or dies in the middle of a collective, or a communicator aborted mid-run: every other
// rank gets a typed error within the bound instead of hanging.
#include <chrono>
#include <stdexcept>
#include <thread>

#include "test_misuse_support.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

CheckOptions throwing_at(FaultStage stage, int rank, std::uint64_t seq,
                         bool schedule_path = false) {
  CheckOptions o = with_timeout(10.0);
  o.schedule_path = schedule_path;
  o.fault_hook = [=](const FaultPoint& p) {
    if (p.rank == rank && p.stage == stage && p.seq == seq)
      throw std::runtime_error("injected fault");
    return FaultAction::proceed;
  };
  return o;
}

// Ranks other than `failed` got AbortedError naming the failed rank and the fault.
void others_aborted(const std::vector<RankOutcome>& out, int failed, const std::string& part) {
  for (std::size_t r = 0; r < out.size(); ++r) {
    INFO("rank " << r << ": " << out[r].type << ": " << out[r].message);
    if (static_cast<int>(r) == failed) {
      CHECK(out[r].type == "std::exception");
      CHECK(out[r].message == "injected fault");
      continue;
    }
    CHECK(out[r].type == "AbortedError");
    CHECK_THAT(out[r].message, Contains(part));
  }
}

}  // namespace

TEST_CASE("misuse 25: a rank throws in the middle of a collective (every rank arrived)",
          "[emu][misuse][fault]") {
  bool schedule_path = GENERATE(false, true);
  int n = GENERATE(2, 4, 7);
  auto out = misuse_run(
      n,
      [](Communicator& c) {
        std::vector<float> x(1000, 1.0f), y(1000);
        c.all_reduce(x.data(), y.data(), 1000, DataType::float32, ReduceOp::sum());
        c.all_reduce(x.data(), y.data(), 1000, DataType::float32, ReduceOp::sum());
      },
      throwing_at(FaultStage::in_collective, n - 1, 1, schedule_path));
  others_aborted(out, n - 1, "rank " + std::to_string(n - 1) + " failed: injected fault");
}

TEST_CASE("misuse 26: a rank throws before it reaches a collective", "[emu][misuse][fault]") {
  auto out = misuse_run(
      4,
      [](Communicator& c) {
        std::vector<float> x(2), y(8);
        c.all_gather(x.data(), y.data(), 2, DataType::float32);
        c.broadcast(y.data(), y.data(), 8, DataType::float32, 0);
      },
      throwing_at(FaultStage::before_collective, 0, 1));
  others_aborted(out, 0, "rank 0 failed: injected fault");
}

TEST_CASE("misuse 27: a rank throws as its send/recv group starts", "[emu][misuse][fault]") {
  auto out = misuse_run(
      3,
      [](Communicator& c) {
        std::vector<float> x(8), y(8);
        int n = c.size();
        c.group_start();
        c.send(x.data(), 8, DataType::float32, (c.rank() + 1) % n);
        c.recv(y.data(), 8, DataType::float32, (c.rank() + n - 1) % n);
        c.group_end();
      },
      throwing_at(FaultStage::before_p2p, 1, 0));
  others_aborted(out, 1, "rank 1 failed: injected fault");
}

TEST_CASE("misuse 28: a rank dies with a non-standard exception mid-collective",
          "[emu][misuse][fault]") {
  CheckOptions o = with_timeout(10.0);
  o.fault_hook = [](const FaultPoint& p) {
    if (p.rank == 2 && p.stage == FaultStage::in_collective) throw 42;
    return FaultAction::proceed;
  };
  auto out = misuse_run(
      3,
      [](Communicator& c) {
        std::vector<float> x(24), y(8);
        c.reduce_scatter(x.data(), y.data(), 8, DataType::float32, ReduceOp::sum());
      },
      o);
  CHECK(out[2].type == "non-standard");
  for (int r : {0, 1}) {
    INFO(out[static_cast<std::size_t>(r)].message);
    CHECK(out[static_cast<std::size_t>(r)].type == "AbortedError");
    CHECK_THAT(
        out[static_cast<std::size_t>(r)].message,
        Contains("reduce_scatter #0 on comm 'world': rank 2 failed: a non-standard exception"));
  }
}

TEST_CASE("misuse 29: a communicator aborted mid-run", "[emu][misuse][fault]") {
  CheckOptions o = with_timeout(10.0);
  o.fault_hook = [](const FaultPoint& p) {
    if (p.rank == 1 && p.seq == 2 && p.stage == FaultStage::before_collective)
      return FaultAction::abort_communicator;
    return FaultAction::proceed;
  };
  auto out = misuse_run(
      4,
      [](Communicator& c) {
        std::vector<float> x(8);
        for (int i = 0; i < 5; ++i)
          c.all_reduce(x.data(), x.data(), 8, DataType::float32, ReduceOp::sum());
      },
      o);
  for (const auto& r : out) {
    INFO(r.message);
    CHECK(r.type == "AbortedError");
    CHECK_THAT(r.message, Contains("comm 'world' was aborted by rank 1") &&
                              Contains("all_reduce #2") && Contains("fault injection"));
  }
}

TEST_CASE("misuse 30: a straggler beyond the timeout is named by the others",
          "[emu][misuse][fault]") {
  CheckOptions o = with_timeout(0.25);
  o.fault_hook = [](const FaultPoint& p) {
    if (p.rank == 3 && p.seq == 0 && p.stage == FaultStage::before_collective) {
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
    }
    return FaultAction::proceed;
  };
  auto out = misuse_run(
      4,
      [](Communicator& c) {
        std::vector<float> x(8);
        c.all_reduce(x.data(), x.data(), 8, DataType::float32, ReduceOp::sum());
      },
      o);
  for (int r : {0, 1, 2}) {
    INFO(out[static_cast<std::size_t>(r)].message);
    // Its own timeout, or the abort caused by a peer's timeout a few ms earlier (same text inside).
    const std::string& type = out[static_cast<std::size_t>(r)].type;
    CHECK((type == "TimeoutError" || type == "AbortedError"));
    CHECK_THAT(
        out[static_cast<std::size_t>(r)].message,
        Contains("all_reduce #0 on comm 'world'") && Contains("waited for rank(s) 3 to arrive") &&
            Contains(
                "rank 3: running its own code [last operation: all_reduce #0 on comm 'world'") &&
            Contains("started]"));
  }
  CHECK(out[3].type == "AbortedError");
}
