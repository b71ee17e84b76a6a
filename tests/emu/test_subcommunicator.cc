// Communicator::subcommunicator on the emulator: a communicator made by its members only (the
// others never call it), as ncclCommInitRank with a shared id; its misuse refused at the call,
// and members that can never meet told so instead of waiting out the deadline.
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "support/harness.h"
#include "twinccl/errors.h"
#include "twinccl/trace/recorder.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

CheckOptions timeout(double seconds) {
  CheckOptions o;
  o.timeout_s = seconds;
  return o;
}

float sum_on(Communicator& c, float value) {
  Buffer x = c.alloc(1, DataType::float32);
  x.copy_from_host(&value, sizeof value);
  c.all_reduce(x, x);
  return x.to_host<float>()[0];
}

}  // namespace

TEST_CASE("subcommunicator: made by the members only, ranked as listed", "[emu][subcommunicator]") {
  std::mutex mu;
  std::vector<std::string> seen(4);
  run_ranks(4, [&](Communicator& w) {
    std::string got;
    if (w.rank() == 2 || w.rank() == 0) {
      // Listed as [2, 0]: world rank 2 is the new rank 0.
      auto pair = w.subcommunicator(std::vector<int>{2, 0}, "pair");
      got = pair->name() + " " + std::to_string(pair->rank()) + "/" + std::to_string(pair->size()) +
            " sum " +
            std::to_string(static_cast<int>(sum_on(*pair, static_cast<float>(w.rank() + 1))));
      // A second one of the same members and name is a new communicator.
      auto again = w.subcommunicator(std::vector<int>{2, 0}, "pair");
      got += " again " + std::to_string(static_cast<int>(sum_on(*again, 10.0f)));
      // One made from it (its ranks), each member alone; unnamed: named after the ranks.
      auto nested = pair->subcommunicator(std::vector<int>{pair->rank()}, {});
      got += " nested " + nested->name() + " " + std::to_string(nested->size());
    } else {
      // The others never call it; they talk among themselves meanwhile.
      Buffer x = w.alloc(1, DataType::float32);
      if (w.rank() == 1) w.send(x, 3);
      if (w.rank() == 3) w.recv(x, 1);
      got = "outside";
    }
    sum_on(w, 1.0f);  // the world is still usable by every rank
    std::lock_guard<std::mutex> lock(mu);
    seen[static_cast<std::size_t>(w.rank())] = got;
  });
  CHECK(seen[0] == "pair 1/2 sum 4 again 20 nested pair.sub[1] 1");
  CHECK(seen[2] == "pair 0/2 sum 4 again 20 nested pair.sub[0] 1");
  CHECK(seen[1] == "outside");
  CHECK(seen[3] == "outside");
}

TEST_CASE("subcommunicator: overlapping groups made in different orders",
          "[emu][subcommunicator]") {
  // MindSpore's pattern: each rank makes the groups it belongs to, in its own order.
  std::mutex mu;
  std::vector<float> sums(3);
  run_ranks(3, [&](Communicator& w) {
    float total = 0;
    if (w.rank() == 0) {
      total += sum_on(*w.subcommunicator(std::vector<int>{0, 1}, "a"), 1.0f);
      total += sum_on(*w.subcommunicator(std::vector<int>{0, 2}, "b"), 1.0f);
    } else if (w.rank() == 1) {
      total += sum_on(*w.subcommunicator(std::vector<int>{0, 1}, "a"), 1.0f);
    } else {
      total += sum_on(*w.subcommunicator(std::vector<int>{0, 2}, "b"), 1.0f);
    }
    std::lock_guard<std::mutex> lock(mu);
    sums[static_cast<std::size_t>(w.rank())] = total;
  });
  CHECK(sums == std::vector<float>{4.0f, 2.0f, 2.0f});
}

TEST_CASE("subcommunicator: misuse refused at the call", "[emu][subcommunicator][misuse]") {
  auto error_of = [](const std::function<void(Communicator&)>& fn) {
    auto outcomes = run_ranks_capture(3, fn, timeout(5));
    return outcomes[0].type + ": " + outcomes[0].message;
  };
  CHECK_THAT(error_of([](Communicator& w) {
               w.subcommunicator(std::vector<int>{1, 2}, "g");
             }),
             Contains("InvalidArgument") && Contains("subcommunicator on comm 'world' rank 0") &&
                 Contains("this rank (0) is not in ranks [1,2]") &&
                 Contains("test_subcommunicator.cc:"));
  CHECK_THAT(error_of([](Communicator& w) {
               w.subcommunicator(std::vector<int>{0, 3}, "g");
             }),
             Contains("ranks[1] = 3 is not a rank of comm 'world' (0..2)"));
  CHECK_THAT(error_of([](Communicator& w) {
               w.subcommunicator(std::vector<int>{0, 1, 0}, "g");
             }),
             Contains("rank 0 is listed twice (ranks[0] and ranks[2])"));
  CHECK_THAT(error_of([](Communicator& w) { w.subcommunicator(std::vector<int>{}, "g"); }),
             Contains("ranks is empty"));
  CHECK_THAT(error_of([](Communicator& w) {
               Group g(w);
               w.subcommunicator(std::vector<int>{0}, "g");
             }),
             Contains("subcommunicator inside the group opened at"));
  CHECK_THAT(error_of([](Communicator& w) {
               w.subcommunicator(std::vector<int>{0}, std::string("a\0b", 3));
             }),
             Contains("holds a control byte"));
}

TEST_CASE("subcommunicator: a member that never comes, members that disagree",
          "[emu][subcommunicator][misuse]") {
  SECTION("a member's function returns without calling it") {
    auto outcomes = run_ranks_capture(
        2,
        [](Communicator& w) {
          if (w.rank() == 0) w.subcommunicator(std::vector<int>{0, 1}, "g");
        },
        timeout(20));
    CHECK(outcomes[0].type == "AbortedError");
    CHECK_THAT(outcomes[0].message, Contains("subcommunicator #0 on comm 'g'") &&
                                        Contains("rank 1") && Contains("returned"));
    CHECK(outcomes[0].seconds < 10);
  }
  SECTION("two members list each other in different communicators") {
    // Rank 2, a member of one of them, still runs while the two meet and returns once both have
    // their outcome: had it returned first, rank 1's wait could end on that instead (AbortedError
    // "waits for rank 2, whose function already returned", seen once in the ASan build).
    std::mutex mu;
    std::condition_variable settled_cv;
    int settled = 0;
    auto outcomes = run_ranks_capture(
        3,
        [&](Communicator& w) {
          if (w.rank() == 2) {
            std::unique_lock<std::mutex> lock(mu);
            settled_cv.wait_for(lock, std::chrono::seconds(20), [&] { return settled == 2; });
            return;
          }
          struct Settle {
            std::mutex& mu;
            std::condition_variable& cv;
            int& settled;
            ~Settle() {
              std::lock_guard<std::mutex> lock(mu);
              ++settled;
              cv.notify_all();
            }
          } settle{mu, settled_cv, settled};
          if (w.rank() == 0) w.subcommunicator(std::vector<int>{0, 1}, "g");
          if (w.rank() == 1) w.subcommunicator(std::vector<int>{0, 1, 2}, "g");
        },
        timeout(20));
    // The second to ask finds the first waiting in the other one.
    const RankOutcome& second = outcomes[0].type == "MismatchError" ? outcomes[0] : outcomes[1];
    CHECK(second.type == "MismatchError");
    CHECK_THAT(second.message, Contains("subcommunicator on comm 'world'") &&
                                   Contains("of ranks [0,1]") && Contains("of ranks [0,1,2]") &&
                                   Contains("every member must pass the same ranks"));
    for (const RankOutcome& o : outcomes) CHECK(o.seconds < 10);
  }
  SECTION("the same members in another order") {
    auto outcomes = run_ranks_capture(
        2,
        [](Communicator& w) {
          w.subcommunicator(w.rank() == 0 ? std::vector<int>{0, 1} : std::vector<int>{1, 0}, "g");
        },
        timeout(20));
    CHECK((outcomes[0].type == "MismatchError" || outcomes[1].type == "MismatchError"));
    for (const RankOutcome& o : outcomes) CHECK(o.seconds < 10);
  }
}

TEST_CASE("subcommunicator: a member stuck in a world collective is a deadlock",
          "[emu][subcommunicator][misuse]") {
  auto outcomes = run_ranks_capture(
      2,
      [](Communicator& w) {
        if (w.rank() == 0) w.subcommunicator(std::vector<int>{0, 1}, "g");
        w.barrier();
      },
      timeout(20));
  CHECK((outcomes[0].type == "DeadlockError" || outcomes[1].type == "DeadlockError"));
  for (const RankOutcome& o : outcomes) CHECK(o.seconds < 10);
}

TEST_CASE("subcommunicator: the trace lists its world ranks", "[emu][subcommunicator][trace]") {
  trace::TraceRecorder recorder(4, {.program = "unit", .measured_compute_scale = 0.0});
  run_ranks(4, [&](Communicator& world) {
    recorder.record(world);
    auto half = world.split(world.rank() % 2, world.rank(), "half");  // [0,2] and [1,3]
    if (world.rank() == 3) {
      // half rank 1 = world rank 3 alone.
      auto mine = half->subcommunicator(std::vector<int>{1}, "solo");
      sum_on(*mine, 1.0f);
    }
  });
  const trace::Trace t = recorder.trace();
  bool found = false;
  for (const auto& c : t.communicators) {
    if (c.name == "solo") {
      found = true;
      CHECK(c.ranks == std::vector<int>{3});
    }
  }
  CHECK(found);
}
