// NCCL's and CUDA's documented rules that docs/nccl-rules-review.md found violated (or easy to
// violate), checked through the recording double. Each test fails when the backend breaks the
// rule: the double records a violation. This checks the mapping onto NCCL and CUDA, not NCCL.
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "nccl/launch.h"
#include "nccl_double/control.h"
#include "twinccl/errors.h"

using namespace twinccl;

namespace {

RunOptions options(double timeout_s = 30) {
  RunOptions o;
  o.backend = "nccl";
  o.timeout_s = timeout_s;
  return o;
}

Buffer filled(Communicator& c, std::vector<float> values) {
  Buffer b = c.alloc(values.size(), DataType::float32);
  b.copy_from_host(values.data(), values.size() * sizeof(float));
  return b;
}

}  // namespace

// Rule: after a call on a non-blocking communicator answers ncclInProgress, no other NCCL call
// on it until ncclCommGetAsyncError says ncclSuccess (NCCL ncclCommEnsureReady; docs "Fault
// Tolerance" / nccl4py get_async_error). ncclRedOpDestroy of premul_sum used to come first.
TEST_CASE(
    "nccl rules: premul_sum's reduce op is destroyed only once the comm is no longer in progress",
    "[nccl_mapping]") {
  nccl_double::use();
  nccl::run_local_ranks({0, 1}, options(), [&](Communicator& w) {
    Buffer x = filled(w, {1, 2, 3, 4});
    w.all_reduce(x, x, ReduceOp::premul_sum(0.5));
    CHECK(x.to_host<float>() == std::vector<float>{1, 2, 3, 4});  // 0.5*x + 0.5*x
    Buffer y = filled(w, {2, 4});
    w.group_start();
    w.all_reduce(y, y, ReduceOp::premul_sum(2.0), {.async_op = true});
    w.group_end();
    CHECK(y.to_host<float>() == std::vector<float>{8, 16});
  });
  INFO(nccl_double::log());
  CHECK(nccl_double::violations().empty());
}

// Rule: a non-blocking ncclCommSplit is a job of the PARENT: the parent is ncclInProgress and
// *newcomm NULL until the job ends (NCCL src/init.cc ncclCommInitChildComm, 2.19 .. 2.30). The
// double writes the child only when the parent's poll succeeds: reading the child before
// polling the parent gives no communicator (REQUIRE fails), polling the null child a violation.
TEST_CASE("nccl rules: a non-blocking split is polled on the parent, the child read afterwards",
          "[nccl_mapping]") {
  nccl_double::use();
  nccl::run_local_ranks({0, 1, 2}, options(), [&](Communicator& w) {
    // Rank 2 arrives late: the parent must stay in progress until every rank called split.
    if (w.rank() == 2) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto child = w.split(w.rank() == 2 ? kNoColor : 0, w.rank());
    if (w.rank() == 2) {
      CHECK(child == nullptr);
      return;
    }
    REQUIRE(child != nullptr);
    CHECK(child->size() == 2);
    Buffer x = filled(*child, {1});
    child->all_reduce(x, x, ReduceOp::sum());
    CHECK(x.to_host<float>() == std::vector<float>{2});
  });
  INFO(nccl_double::log());
  CHECK(nccl_double::violations().empty());
}

// Rule (CUDA runtime "API synchronization behavior"): a cudaMemcpyAsync with pageable host
// memory may synchronize with the stream first. copy_out right after an async collective used
// to queue the copy behind it: an unbounded host wait inside CUDA when the peer never comes.
TEST_CASE("nccl rules: host copies wait for the stream (bounded) before cudaMemcpyAsync",
          "[nccl_mapping]") {
  nccl_double::use();
  nccl::run_local_ranks({0, 1}, options(), [&](Communicator& w) {
    Buffer x = filled(w, {1, 2});
    if (w.rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(150));
    Work work = w.all_reduce(x, x, ReduceOp::sum(), {.async_op = true});
    CHECK(x.to_host<float>() == std::vector<float>{2, 4});  // ordered after the all_reduce
    work.wait();
    std::vector<float> three{3, 3};
    Work again = w.all_reduce(x, x, ReduceOp::sum(), {.async_op = true});
    if (w.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    x.copy_from_host(three.data(), 2 * sizeof(float));  // after the all_reduce, not racing it
    again.wait();
    CHECK(x.to_host<float>() == three);
  });
  INFO(nccl_double::log());
  CHECK(nccl_double::violations().empty());
}

// Rule: the ncclGroupEnd that closes a group left open may answer ncclInProgress on a
// non-blocking comm; ncclCommFinalize must not follow before it was polled to ncclSuccess.
TEST_CASE("nccl rules: a group left open at destruction is closed and polled before finalize",
          "[nccl_mapping]") {
  nccl_double::use();
  nccl::run_local_ranks({0, 1}, options(), [&](Communicator& w) {
    auto child = w.split(0, w.rank(), "open-group");
    REQUIRE(child);
    Buffer y = child->alloc(4, DataType::float32);
    child->group_start();
    child->all_reduce(y, y, ReduceOp::sum(), {.async_op = true});
    child.reset();  // no group_end
    w.barrier();    // the thread's group state was closed: this is not deferred
  });
  INFO(nccl_double::log());
  CHECK(nccl_double::violations().empty());
  CHECK(nccl_double::log_count("ncclCommFinalize") >= 4);
  CHECK_FALSE(nccl_double::log_has("ncclCommAbort"));
}

#endif  // TWINCCL_NCCL_DOUBLE_PATH
