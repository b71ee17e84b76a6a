// Cancellation on the error path (docs/misuse.md, "Raw pointers on the error path"): once an
// operation fails, nothing queued behind it on the rank's communicator runs; a Work destroyed by
// stack unwinding never lets its operation touch the unwound memory afterwards. The buffers the
// ranks pass are the test's own, so that a write after the rank's scope unwound is seen (under
// ASan the same programs with local buffers are use-after-free on the old code: see
// test_p2p_per_peer.cc's irecv-first ring).
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <thread>

#include "test_misuse_support.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

constexpr auto kLater = std::chrono::milliseconds(150);  // a peer acting after rank 1 unwound

// "AbortedError: <what>", "other: <what>" or "" (done): recorded by a rank, checked after the run.
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const AbortedError& e) {
    return std::string("AbortedError: ") + e.what();
  } catch (const std::exception& e) {
    return std::string("other: ") + e.what();
  }
  return "";
}

// Copies `buffer` when destroyed: the moment the rank's memory would be freed. Declared before the
// Works, it is destroyed after them, as a local buffer would be.
class FreedAt {
 public:
  FreedAt(const std::vector<float>& buffer, std::vector<float>& copy)
      : buffer_(buffer), copy_(copy) {}
  ~FreedAt() { copy_ = buffer_; }
  FreedAt(const FreedAt&) = delete;
  FreedAt& operator=(const FreedAt&) = delete;

 private:
  const std::vector<float>& buffer_;
  std::vector<float>& copy_;
};

// Rank 1's first send fails (after 50 ms, when everything it issues next is queued).
FaultHook first_send_of_rank_1_fails(std::atomic<bool>& thrown) {
  return [&thrown](const FaultPoint& p) {
    if (p.stage == FaultStage::before_p2p && p.rank == 1 && !thrown.exchange(true)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      throw std::runtime_error("injected: rank 1's first send fails");
    }
    return FaultAction::proceed;
  };
}

}  // namespace

TEST_CASE("cancel: what is queued behind a failed operation, or issued later, never runs",
          "[emu][cancel]") {
  CheckLevel level = GENERATE(CheckLevel::off, CheckLevel::on);
  std::atomic<bool> thrown{false};
  CheckOptions o = checks(level);
  o.fault_hook = first_send_of_rank_1_fails(thrown);
  std::array<std::array<std::string, 4>, 2> errors;
  std::array<std::array<int, 4>, 2> lines{};
  std::vector<float> second(4, -1.0f);  // rank 0's second recv
  misuse_run(
      2,
      [&](Communicator& c) {
        const auto r = static_cast<std::size_t>(c.rank());
        std::vector<float> one(4, 1.0f), two(4, 2.0f), x(4, 1.0f), got(4, -1.0f);
        auto& at = lines[r];
        Work a, b;
        if (c.rank() == 1) {
          at[0] = __LINE__ + 1;
          a = c.send(one.data(), 4, DataType::float32, 0, {.async_op = true});  // fails
          at[1] = __LINE__ + 1;
          b = c.send(two.data(), 4, DataType::float32, 0, {.async_op = true});
        } else {
          at[0] = __LINE__ + 1;
          a = c.recv(got.data(), 4, DataType::float32, 1, {.async_op = true});
          at[1] = __LINE__ + 1;
          b = c.recv(second.data(), 4, DataType::float32, 1, {.async_op = true});
        }
        at[2] = __LINE__ + 1;
        Work d = c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum(),
                              {.async_op = true});
        errors[r][0] = error_of([&] { a.wait(); });
        errors[r][1] = error_of([&] { b.wait(); });
        errors[r][2] = error_of([&] { d.wait(); });
        at[3] = __LINE__ + 1;
        errors[r][3] = error_of([&] { c.barrier(); });  // the error state stays
      },
      o);
  const std::string injected = "injected: rank 1's first send fails";
  auto op = [&](const char* what, int rank, int k) {
    return std::string(what) + " on comm 'world' rank " + std::to_string(rank) + " (" +
           site(__FILE__, lines[static_cast<std::size_t>(rank)][static_cast<std::size_t>(k)]) + ")";
  };
  for (int r = 0; r < 2; ++r) {
    const auto& e = errors[static_cast<std::size_t>(r)];
    const char* p2p = r == 1 ? "send" : "recv";
    INFO("rank " << r << ":\n" << e[0] << "\n" << e[1] << "\n" << e[2] << "\n" << e[3]);
    CHECK_THAT(e[0], Contains(injected));  // rank 0's recv: rank 1's send left a tombstone
    std::string first = op(p2p, r, 0) + " failed: ";
    CHECK_THAT(e[1], StartsWith("AbortedError: " + op(p2p, r, 1) +
                                " was cancelled before it started: " + first));
    CHECK_THAT(e[2], StartsWith("AbortedError: ") &&
                         Contains(op("all_reduce #0", r, 2) + " was cancelled before it started"));
    CHECK_THAT(e[3], StartsWith("AbortedError: " + op("barrier #1", r, 3) +
                                " was cancelled before it started: " + first));
    CHECK_THAT(e[1] + e[2] + e[3], Contains(injected));
  }
  for (float v : second) CHECK(v == -1.0f);  // rank 1's second send never posted its buffer
}

TEST_CASE("cancel: a failed wait unwinds, and no operation touches the unwound buffers",
          "[emu][cancel]") {
  bool per_peer = GENERATE(false, true);  // queued behind the failed send, or running beside it
  std::atomic<bool> thrown{false};
  CheckOptions o = with_timeout(10.0);
  o.p2p_per_peer_streams = per_peer;
  o.fault_hook = first_send_of_rank_1_fails(thrown);
  std::vector<float> in(4, -1.0f), in_when_freed;
  auto out = misuse_run(
      2,
      [&](Communicator& c) {
        std::vector<float> x(4, 1.0f), z(4, 7.0f);
        if (c.rank() == 0) {
          std::this_thread::sleep_for(kLater);
          c.send(z.data(), 4, DataType::float32, 1);
          c.recv(x.data(), 4, DataType::float32, 1);
          c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
          return;
        }
        FreedAt freed(in, in_when_freed);
        Work a = c.send(z.data(), 4, DataType::float32, 0, {.async_op = true});  // fails
        Work b = c.recv(in.data(), 4, DataType::float32, 0, {.async_op = true});
        Work d = c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum(),
                              {.async_op = true});
        a.wait();  // throws: d, b, freed and the buffers are destroyed by unwinding
      },
      o);
  CHECK_THAT(out[1].message, Contains("injected: rank 1's first send fails"));
  CHECK(out[0].type == "AbortedError");
  REQUIRE(in_when_freed.size() == 4);
  CHECK(in == in_when_freed);  // nothing wrote rank 1's recv buffer after its scope unwound
  for (float v : in) CHECK(v == -1.0f);
}

TEST_CASE("cancel: a Work destroyed by the rank's own exception never runs afterwards",
          "[emu][cancel]") {
  bool per_peer = GENERATE(false, true);
  CheckLevel level = GENERATE(CheckLevel::off, CheckLevel::on);
  CheckOptions o = checks(level);
  o.p2p_per_peer_streams = per_peer;
  std::vector<float> in(4, -1.0f), in_when_freed;
  int line = 0, recv_line = 0;
  // Rank 1's all_reduce is running (waiting for rank 0) when rank 1 throws; its recv is queued
  // behind it (one stream) or running beside it (per peer).
  auto out = misuse_run(
      2,
      [&](Communicator& c) {
        std::vector<float> x(4, 1.0f), z(4, 7.0f);
        if (c.rank() == 0) {
          std::this_thread::sleep_for(kLater);
          c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
          c.send(z.data(), 4, DataType::float32, 1);
          return;
        }
        FreedAt freed(in, in_when_freed);
        line = __LINE__ + 1;
        Work ar = c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum(),
                               {.async_op = true});  // runs: waits for rank 0
        recv_line = __LINE__ + 1;
        Work b = c.recv(in.data(), 4, DataType::float32, 0, {.async_op = true});
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the all_reduce started
        throw std::runtime_error("rank 1's own code fails with operations in flight");
      },
      o);
  CHECK_THAT(out[1].message, Contains("rank 1's own code fails"));
  INFO(out[0].message);
  CHECK(out[0].type == "AbortedError");
  // The first running operation whose Work is destroyed (the last one issued first) aborts.
  std::string running = per_peer ? "recv on comm 'world' rank 1 (" + site(__FILE__, recv_line)
                                 : "all_reduce #0 on comm 'world' rank 1 (" + site(__FILE__, line);
  CHECK_THAT(out[0].message,
             Contains(running +
                      "): its Work was destroyed during stack unwinding while the operation ran"));
  REQUIRE(in_when_freed.size() == 4);
  CHECK(in == in_when_freed);
  for (float v : in) CHECK(v == -1.0f);
}

TEST_CASE("cancel: a group discarded by an exception leaves the communicator usable",
          "[emu][cancel]") {
  // The group's Work is destroyed by the unwinding after the Group (declared later) discarded the
  // group: its stream task (queued behind rank 1's pending all_reduce) runs nothing of the user's,
  // so the communicator is not failed and the next collective works.
  std::array<float, 2> reduced{};
  auto out = misuse_run(2, [&](Communicator& c) {
    std::vector<float> x(4, 1.0f), y(4, 1.0f);
    if (c.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Work busy =
        c.all_reduce(y.data(), y.data(), 4, DataType::float32, ReduceOp::sum(), {.async_op = true});
    try {
      Work early;
      Group g(c);
      early = c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
      throw std::runtime_error("the rank's code fails inside the group");
    } catch (const std::runtime_error&) {
    }
    busy.wait();
    c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
    reduced[static_cast<std::size_t>(c.rank())] = x[0];
  });
  for (const auto& o : out) {
    INFO(o.type << ": " << o.message);
    CHECK(o.type.empty());
  }
  for (float r : reduced) CHECK(r == 2.0f);
}
