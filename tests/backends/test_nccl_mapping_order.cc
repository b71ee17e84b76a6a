// The NCCL backend's stream order, groups, waits and aborts, through the recording test double.
// Checks the mapping onto NCCL and CUDA (what is queued where, in which order, which waits are
// bounded), not NCCL itself; see test_nccl_mapping.cc and docs/nccl-backend.md.
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "nccl/launch.h"
#include "nccl_double/control.h"
#include "twinccl/errors.h"

using namespace twinccl;
using Clock = std::chrono::steady_clock;

namespace {

RunOptions options(double timeout_s = 30) {
  RunOptions o;
  o.backend = "nccl";
  o.timeout_s = timeout_s;
  return o;
}

struct Fill {
  float* data;
  float value;
};
void fill_four(void* arg) {
  auto* f = static_cast<Fill*>(arg);
  for (int i = 0; i < 4; ++i) f->data[i] = f->value;
}

}  // namespace

TEST_CASE("nccl mapping: a collective waits for the caller's stream (user kernel then all_reduce)",
          "[nccl_mapping]") {
  nccl_double::use();
  nccl::run_local_ranks({0, 1}, options(), [&](Communicator& w) {
    Buffer x = w.alloc(4, DataType::float32);
    // "Kernel" on the legacy default stream that writes x 50 ms later (the device pointer is host
    // memory in the double, so the stand-in kernel writes it directly).
    Fill fill{static_cast<float*>(x.data()), static_cast<float>(w.rank() + 1)};
    nccl_double::user_kernel(nullptr, fill_four, &fill, 50);
    w.all_reduce(x, x, ReduceOp::sum());
    CHECK(x.to_host<float>() == std::vector<float>(4, 3.0f));
  });
  CHECK(nccl_double::violations().empty());
}

TEST_CASE("nccl mapping: set_caller_stream and Work::wait_stream", "[nccl_mapping]") {
  nccl_double::use();
  nccl::run_local_ranks({0, 1}, options(), [&](Communicator& w) {
    cudaStream_t mine = nullptr;
    REQUIRE(nccl::api().cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking) == cudaSuccess);
    w.set_caller_stream(mine);
    Buffer x = w.alloc(4, DataType::float32);
    Fill fill{static_cast<float*>(x.data()), 2.0f};
    nccl_double::user_kernel(mine, fill_four, &fill, 30);
    Work work = w.all_reduce(x, x, ReduceOp::sum(), {.async_op = true});
    work.wait_stream(mine);  // the GPU stream waits; the host does not
    work.wait();
    CHECK(x.to_host<float>() == std::vector<float>(4, 4.0f));
    w.set_caller_stream(nullptr);
  });
  CHECK(nccl_double::violations().empty());
}

TEST_CASE("nccl mapping: groups are per thread, another communicator inside a group is refused",
          "[nccl_mapping]") {
  nccl_double::use();
  nccl::run_local_ranks({0, 1}, options(), [&](Communicator& w) {
    auto child = w.split(0, w.rank(), "child");
    REQUIRE(child);
    Buffer x = w.alloc(4, DataType::float32);
    Buffer y = child->alloc(4, DataType::float32);
    w.group_start();
    w.all_reduce(x, x, ReduceOp::sum(), {.async_op = true});
    CHECK_THROWS_WITH(
        child->all_reduce(y, y, ReduceOp::sum()),
        Catch::Contains("group_start at") && Catch::Contains("test_nccl_mapping_order.cc"));
    CHECK_THROWS_AS(child->group_start(), InvalidArgument);
    CHECK_THROWS_WITH(w.split(1, 0), Catch::Contains("group_end first"));
    w.group_end();
    // The emulator's words (the base class checks split's arguments for every backend).
    CHECK_THROWS_WITH(w.split(-5, 0), Catch::Contains("color=-5 is negative; use kNoColor"));
    child->all_reduce(y, y, ReduceOp::sum());  // after the group: fine
    // One launch order across communicators: the child's stream waits for the world's launch.
    w.all_reduce(x, x, ReduceOp::sum(), {.async_op = true});
    child->all_reduce(y, y, ReduceOp::sum());
    w.barrier();
  });
  CHECK(nccl_double::violations().empty());
  CHECK(nccl_double::log_has("name=child"));
}

TEST_CASE(
    "nccl mapping: errors name the call as the emulator does: operation, comm, rank, call site",
    "[nccl_mapping]") {
  nccl_double::use();
  nccl::run_local_ranks({0, 1}, options(), [&](Communicator& w) {
    const std::string who = "on comm '" + w.name() + "' rank " + std::to_string(w.rank());
    CHECK_THROWS_WITH(w.group_end(),
                      Catch::StartsWith("group_end " + who + " (test_nccl_mapping_order.cc:") &&
                          Catch::EndsWith("): no group is open"));
    CHECK_THROWS_WITH(
        w.alloc(std::numeric_limits<std::size_t>::max() / 2, DataType::float32),
        Catch::StartsWith("alloc " + who + ": ") && Catch::Contains("overflow size_t"));
    auto child = w.split(0, w.rank(), "child");
    REQUIRE(child);
    Buffer y = child->alloc(4, DataType::float32);
    w.group_start();
    CHECK_THROWS_WITH(
        child->all_reduce(y, y, ReduceOp::sum()),
        Catch::StartsWith("all_reduce on comm 'child' rank " + std::to_string(child->rank()) +
                          " (test_nccl_mapping_order.cc:"));
    w.group_end();
  });
  CHECK(nccl_double::violations().empty());
}

TEST_CASE("nccl mapping: a failing rank raises the abort signal before its buffers are freed",
          "[nccl_mapping]") {
  nccl_double::use();
  const auto start = Clock::now();
  std::atomic<bool> rank0_aborted{false};
  // Rank 1 fails only once rank 0's all_reduce has returned: on a loaded machine rank 0 could
  // otherwise still be waiting in the all_reduce when the signal is raised, and stop there.
  std::atomic<bool> rank0_all_reduced{false};
  try {
    nccl::run_local_ranks({0, 1}, options(60), [&](Communicator& w) {
      Buffer x = w.alloc(1024, DataType::float32);
      w.all_reduce(x, x, ReduceOp::sum());
      if (w.rank() == 1) {
        w.send(x, 0, {.async_op = true});  // queued; rank 0 never receives it...
        const auto deadline = Clock::now() + std::chrono::seconds(10);
        while (!rank0_all_reduced.load() && Clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        throw std::runtime_error("rank 1 fails here");  // ...and this rank fails, freeing x
      }
      rank0_all_reduced = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      try {
        w.barrier();  // a different collective than rank 1's: never completes
      } catch (const AbortedError&) {
        rank0_aborted = true;
        throw;
      }
    });
    FAIL("run_local_ranks should rethrow rank 1's error");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("rank 1 fails here"));  // the real error, not AbortedError
  }
  CHECK(rank0_aborted);
  CHECK(Clock::now() - start < std::chrono::seconds(20));  // not the 60 s timeout
  CHECK(nccl_double::log_has("ncclCommAbort"));
  CHECK_THAT(nccl_double::violations(),
             !Catch::Contains("cudaFree of a buffer that queued stream work"));
}

TEST_CASE("nccl mapping: a collective a peer never joins ends with TimeoutError, not a hang",
          "[nccl_mapping]") {
  nccl_double::use();
  const auto start = Clock::now();
  CHECK_THROWS_AS(
      nccl::run_local_ranks({0, 1}, options(1),
                            [&](Communicator& w) {
                              Buffer x = w.alloc(8, DataType::float32);
                              if (w.rank() == 0) {
                                w.all_reduce(x, x, ReduceOp::sum());
                              } else {
                                std::this_thread::sleep_for(std::chrono::milliseconds(2500));
                              }
                            }),
      TimeoutError);
  CHECK(Clock::now() - start < std::chrono::seconds(15));
}

TEST_CASE("nccl mapping: copies, frees and destruction never block the host on the GPU",
          "[nccl_mapping]") {
  nccl_double::use();
  nccl::run_local_ranks({0, 1, 2}, options(), [&](Communicator& w) {
    for (int i = 0; i < 3; ++i) {
      Buffer x = w.alloc(16, DataType::int32);
      Work work = w.all_reduce(x, x, ReduceOp::sum(), {.async_op = true});
      (void)work;  // x freed right after: must wait (bounded) for the queued all_reduce
    }
    auto sub = w.split(w.rank() % 2, 0);
    sub->barrier();
  });
  CHECK(nccl_double::violations().empty());
  CHECK(nccl_double::log_has("ncclCommFinalize"));
}

#endif  // TWINCCL_NCCL_DOUBLE_PATH
