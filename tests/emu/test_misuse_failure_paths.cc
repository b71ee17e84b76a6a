// Misuse scenarios 42-45 (docs/misuse.md): the emulator's own failure paths, part 1. Buffers
// dropped while an async operation runs, a straggler meeting peers that gave up, a failed group
// on 3+ ranks (core and torch-style calls). Each ends with a typed error carrying the real cause
// on every involved rank within the bound (or with correct results), never a hang or a crash.
// Scenarios 46-50 are in test_misuse_groups_threads.cc.
#include <array>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>

#include "test_misuse_support.h"
#include "twinccl/torch_style.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

TEST_CASE("misuse 42: Buffers dropped before Work::wait() stay alive until the operation completed",
          "[emu][misuse][failure]") {
  CheckLevel level = GENERATE(CheckLevel::off, CheckLevel::on, CheckLevel::debug);
  SECTION("dropped before wait") {
    std::vector<float> got(3);
    auto out = misuse_run(
        3,
        [&](Communicator& c) {
          if (c.rank() == 2)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the others' ops wait
          Work w;
          Buffer keep = c.alloc(256, DataType::float32);
          {
            Buffer x = c.alloc(256, DataType::float32);
            x.fill_from_host<float>(filled(256, static_cast<float>(c.rank() + 1)));
            Buffer y = c.alloc(256, DataType::float32);
            w = c.all_reduce(x, y, ReduceOp::sum(), {.async_op = true});
            Buffer z = c.alloc(256, DataType::float32);
            z.fill_from_host<float>(filled(256, 1.0f));
            c.all_reduce(z, keep, ReduceOp::sum(),
                         {.async_op = true});  // covered by the later wait
          }  // x, y and z dropped while the operations may still run
          w.wait();
          c.barrier();
          got[static_cast<std::size_t>(c.rank())] = keep.to_host<float>()[255];
        },
        checks(level));
    for (std::size_t r = 0; r < 3; ++r) {
      CHECK(out[r].type.empty());
      CHECK(got[r] == 3.0f);
    }
  }
  SECTION("a Work never waited on, its Buffer a local of the returned function") {
    std::string run_error;
    auto out = misuse_run(
        2,
        [&](Communicator& c) {
          if (c.rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(100));
          Buffer x = c.alloc(1024, DataType::float32);
          c.all_reduce(x, x, ReduceOp::sum(),
                       {.async_op = true});  // never waited; x dies at return
        },
        checks(level), &run_error);
    for (const auto& o : out) CHECK(o.type.empty());
    if (level != CheckLevel::off) CHECK_THAT(run_error, Contains("its Work was never waited on"));
    if (level == CheckLevel::off) CHECK(run_error.empty());
  }
}

TEST_CASE("misuse 43: a straggler after the others timed out and returned gets the cause at once",
          "[emu][misuse][failure]") {
  CheckLevel level = GENERATE(CheckLevel::off, CheckLevel::on);
  SECTION("collective") {
    CaughtByRank caught(3);
    std::array<int, 3> lines{};
    auto out = misuse_run(
        3,
        [&](Communicator& c) {
          std::vector<float> x(4);
          if (c.rank() == 2) std::this_thread::sleep_for(std::chrono::milliseconds(700));
          caught.run(c.rank(), [&] {
            lines[static_cast<std::size_t>(c.rank())] = __LINE__ + 1;
            c.all_reduce(x.data(), x.data(), 4, DataType::float32, ReduceOp::sum());
          });
        },
        checks(level, 0.3));
    int line = lines[2];
    for (int r : {0, 1}) {
      INFO("rank " << r << ": " << caught[r].type << ": " << caught[r].message);
      // The first to time out gets TimeoutError; the other stops at once with its text.
      CHECK((caught[r].type == "TimeoutError" || caught[r].type == "AbortedError"));
      CHECK_THAT(caught[r].message, Contains("all_reduce #0 on comm 'world'") &&
                                        Contains("waited for rank(s) 2 to arrive"));
    }
    INFO(caught[2].message);
    CHECK(caught[2].type == "AbortedError");
    CHECK_THAT(caught[2].message,
               Contains("all_reduce #0 on comm 'world': rank 2 (" + site(__FILE__, line) +
                        ") arrived after the others stopped waiting: rank ") &&
                   Contains("waited for rank(s) 2 to arrive for 0.3"));
    CHECK(out[2].seconds < 0.7 + 0.5);  // at once, not after another timeout
  }
  SECTION("send after its recv timed out") {
    CaughtByRank caught(2);
    auto out = misuse_run(
        2,
        [&](Communicator& c) {
          std::vector<float> x(4);
          caught.run(c.rank(), [&] {
            if (c.rank() == 0) {
              c.recv(x.data(), 4, DataType::float32, 1);
            } else {
              std::this_thread::sleep_for(std::chrono::milliseconds(700));
              c.send(x.data(), 4, DataType::float32, 0);
            }
          });
        },
        checks(level, 0.3));
    INFO(caught[0].message);
    CHECK(caught[0].type == "TimeoutError");
    INFO(caught[1].message);
    CHECK(caught[1].type == "AbortedError");
    CHECK_THAT(caught[1].message,
               Contains("send on comm 'world' rank 1 (") &&
                   Contains("to rank 0: the matching recv (") &&
                   Contains("will never take it: rank 0 failed: recv on comm 'world' rank 0") &&
                   Contains("waited for a send from rank 1 for 0.3"));
    CHECK(out[1].seconds < 0.7 + 0.5);
  }
}

TEST_CASE("misuse 44: a send/recv mismatch in a group on 3+ ranks reaches every rank at once",
          "[emu][misuse][failure]") {
  int n = GENERATE(3, 4, 7);
  CheckLevel level = GENERATE(CheckLevel::off, CheckLevel::on);
  bool handled =
      GENERATE(true, false);  // ranks catch their error and return, or let it fail the run
  CaughtByRank caught(n);
  int send_line = 0, recv_line = 0;
  auto out = misuse_run(
      n,
      [&](Communicator& c) {
        std::vector<float> x(4 * static_cast<std::size_t>(n)), y(8 * static_cast<std::size_t>(n));
        auto body = [&] {
          Group g(c);
          for (int q = 0; q < n; ++q) {  // everyone exchanges with everyone, receiving from 0 first
            auto at = static_cast<std::size_t>(q);
            std::size_t count = c.rank() == 1 && q == 0 ? 8 : 4;  // rank 1 expects 8 from rank 0
            int sl = __LINE__ + 1;
            c.send(x.data() + 4 * at, 4, DataType::float32, q);
            int rl = __LINE__ + 1;
            c.recv(y.data() + 8 * at, count, DataType::float32, q);
            if (c.rank() == 0 && q == 1) send_line = sl;
            if (c.rank() == 1 && q == 0) recv_line = rl;
          }
        };
        if (handled) {
          caught.run(c.rank(), body);
        } else {
          try {
            body();
          } catch (const Error& e) {
            caught.run(c.rank(), [&] { throw; });
            throw;
          }
        }
      },
      checks(level));
  std::string cause = "send/recv mismatch on comm 'world': rank 0 (" + site(__FILE__, send_line) +
                      ") sends 4 x float32 to rank 1, but rank 1 (" + site(__FILE__, recv_line) +
                      ") receives 8 x float32 from rank 0";
  for (int r = 0; r < n; ++r) {
    INFO("rank " << r << ": " << caught[r].type << ": " << caught[r].message);
    if (r <= 1) CHECK((caught[r].type == "MismatchError" || caught[r].type == "AbortedError"));
    if (r > 1) CHECK(caught[r].type == "AbortedError");
    CHECK_THAT(caught[r].message, Contains(cause));
  }
}

TEST_CASE("misuse 45: torch-style all_gather with a tensor larger than tensor_list[r]",
          "[emu][misuse][failure]") {
  namespace td = twinccl::torch_style;
  int n = GENERATE(3, 4);
  CaughtByRank caught(n);
  auto out = misuse_run(n, [&](Communicator& c) {
    Buffer tensor = c.alloc(c.rank() == 1 ? 8 : 4, DataType::float32);
    std::vector<Buffer> list;
    for (int r = 0; r < n; ++r) list.push_back(c.alloc(4, DataType::float32));
    caught.run(c.rank(), [&] { td::all_gather(c, list, tensor); });
  });
  for (int r = 0; r < n; ++r) {
    INFO("rank " << r << ": " << caught[r].type << ": " << caught[r].message);
    CHECK((caught[r].type == "MismatchError" || caught[r].type == "AbortedError"));
    CHECK_THAT(caught[r].message, Contains("all_gather on comm 'world': rank 1's tensor (") &&
                                      Contains(") holds 8 x float32, but rank ") &&
                                      Contains("'s tensor_list[1] (") &&
                                      Contains(") holds 4 x float32; they must match"));
    CHECK_THAT(caught[r].message, !Contains("send/recv mismatch"));
  }
}
