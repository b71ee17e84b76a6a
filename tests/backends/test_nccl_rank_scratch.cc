// Several ranks on one GPU (NCCL >= 2.30, NCCL_MULTI_RANK_GPU_ENABLE=1): NCCL asks for every
// buffer to be allocated before the first collective, since cudaMalloc/cudaFree synchronise the
// device against a peer's spinning kernel. TwinCCL's own buffers after a communicator is made
// (split's and subcommunicator's record exchanges, a child's barrier element) come from the rank's
// scratch (backends/nccl/rank_scratch.h), allocated before the rank's first init. Checked on the
// recording double with its allocate_before_collectives rule.
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <catch2/catch.hpp>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "nccl/launch.h"
#include "nccl_double/control.h"
#include "twinccl/run.h"

using namespace twinccl;

namespace {

struct DoubleSettings {
  DoubleSettings() {
    nccl_double::use();
    nccl_double::set("nccl_version", 23003);
    nccl_double::set("allocate_before_collectives", 1);
    ::setenv("NCCL_MULTI_RANK_GPU_ENABLE", "1", 1);
  }
  ~DoubleSettings() {
    nccl_double::set("allocate_before_collectives", 0);
    nccl_double::set("nccl_version", 22809);
    ::unsetenv("NCCL_MULTI_RANK_GPU_ENABLE");
  }
};

// As NCCL asks: every user buffer before the rank's first collective; then collectives, splits, a
// members-only group and barriers, none of which may allocate.
void program(Communicator& w, std::mutex& mu, std::vector<float>& sums) {
  Buffer x = w.alloc(4, DataType::float32);
  const float one[4] = {1, 1, 1, 1};
  x.copy_from_host(one, sizeof one);
  w.all_reduce(x, x, ReduceOp::sum());
  auto half = w.split(w.rank() % 2, w.rank(), "half");
  half->barrier();
  half->all_reduce(x, x, ReduceOp::sum());
  if (w.rank() == 1 || w.rank() == 2) {
    auto pair = w.subcommunicator(std::vector<int>{2, 1}, "pair");
    pair->barrier();
  }
  auto again = half->split(0, -w.rank(), "again");
  again->barrier();
  w.barrier();
  std::lock_guard lock(mu);
  sums[static_cast<std::size_t>(w.rank())] = x.to_host<float>()[0];
}

}  // namespace

TEST_CASE("nccl rank scratch: no cudaMalloc mid-run with two ranks per GPU",
          "[nccl_mapping][multi_rank]") {
  DoubleSettings settings;
  std::mutex mu;
  std::vector<float> sums(4);
  RunOptions options;
  options.backend = "nccl";
  options.timeout_s = 30;
  nccl::run_local_ranks({0, 0, 1, 1}, options, [&](Communicator& w) { program(w, mu, sums); });
  INFO(nccl_double::violations());
  CHECK(nccl_double::violations().empty());
  for (float s : sums) CHECK(s == 8.0f);  // 4 ranks, then the 2 of each half
}

#endif  // TWINCCL_NCCL_DOUBLE_PATH
