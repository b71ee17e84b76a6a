// Small collectives are run by the last rank to arrive for every rank (emu/src/fast_path.cc,
// lead_small_collective): the bytes must be the schedule path's, on both sides of the size limit,
// and the misuse checks must still reach every rank.
#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "support/harness.h"
#include "test_misuse_support.h"
#include "twinccl/errors.h"

using namespace twinccl;
using namespace twinccl::testing;

namespace {

constexpr std::size_t kLeadMaxFloats = 16 * 1024 / sizeof(float);  // emu::kLeadMaxBytes

// Every rank's output of `op` on n ranks, with the default path or the schedule path.
template <class Op>
std::vector<std::vector<float>> outputs(int n, std::size_t count, bool schedule_path, Op op) {
  std::vector<std::vector<float>> out(static_cast<std::size_t>(n));
  HarnessOptions options;
  options.schedule_path = schedule_path;
  run_ranks(
      n,
      [&](Communicator& c) {
        std::vector<float> in(count * static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < in.size(); ++i)
          in[i] = 0.1f * static_cast<float>(c.rank() + 1) + 1e-3f * static_cast<float>(i);
        std::vector<float> result(count * static_cast<std::size_t>(n), -7.0f);
        for (int repeat = 0; repeat < 3; ++repeat)
          op(c, in.data(), result.data(), count);  // recycled meetings
        out[static_cast<std::size_t>(c.rank())] = result;
      },
      options);
  return out;
}

}  // namespace

TEST_CASE("small collectives led by the last rank give the schedule path's bytes", "[emu][small]") {
  int n = GENERATE(1, 2, 3, 7, 8);
  std::size_t count =
      GENERATE(std::size_t{0}, std::size_t{1}, std::size_t{5}, kLeadMaxFloats, kLeadMaxFloats + 1);
  INFO("ranks " << n << ", count " << count);
  auto all_reduce = [](Communicator& c, float* in, float* out, std::size_t k) {
    c.all_reduce(in, out, k, DataType::float32, ReduceOp::sum());
  };
  auto reduce_scatter = [](Communicator& c, float* in, float* out, std::size_t k) {
    c.reduce_scatter(in, out, k, DataType::float32, ReduceOp::avg());
  };
  auto all_gather = [](Communicator& c, float* in, float* out, std::size_t k) {
    c.all_gather(in, out, k, DataType::float32);
  };
  auto broadcast = [](Communicator& c, float* in, float* out, std::size_t k) {
    c.broadcast(in, out, k, DataType::float32, c.size() - 1);
  };
  auto in_place_all_reduce = [](Communicator& c, float* in, float*, std::size_t k) {
    c.all_reduce(in, in, k, DataType::float32, ReduceOp::max());
  };
  CHECK(outputs(n, count, false, all_reduce) == outputs(n, count, true, all_reduce));
  CHECK(outputs(n, count, false, reduce_scatter) == outputs(n, count, true, reduce_scatter));
  CHECK(outputs(n, count, false, all_gather) == outputs(n, count, true, all_gather));
  CHECK(outputs(n, count, false, broadcast) == outputs(n, count, true, broadcast));
  CHECK(outputs(n, count, false, in_place_all_reduce) ==
        outputs(n, count, true, in_place_all_reduce));
}

TEST_CASE("a small collective that disagrees fails on every rank, whoever arrives last",
          "[emu][small][misuse]") {
  int late = GENERATE(0, 2);  // the rank that arrives last runs the collective for everyone
  auto out = misuse_run(3, [&](Communicator& c) {
    std::vector<float> x(8, 1.0f);
    if (c.rank() == late) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    c.all_reduce(x.data(), x.data(), c.rank() == 1 ? 4 : 8, DataType::float32, ReduceOp::sum());
  });
  for (const RankOutcome& o : out) {
    INFO(o.type << ": " << o.message);
    CHECK(o.type == "MismatchError");
    CHECK(o.message.find("ranks disagree on count") != std::string::npos);
  }
}

TEST_CASE("many small collectives and barriers back to back keep their order", "[emu][small]") {
  std::vector<int> wrong(8, 0);  // per rank (Catch's assertions are not for rank threads)
  run_ranks(8, [&](Communicator& c) {
    for (int i = 0; i < 300; ++i) {
      int x = c.rank() + i;
      c.all_reduce(&x, &x, 1, DataType::int32, ReduceOp::sum());
      if (x != 28 + 8 * i) ++wrong[static_cast<std::size_t>(c.rank())];
      if (i % 7 == 0) c.barrier();
    }
  });
  CHECK(wrong == std::vector<int>(8, 0));
}

TEST_CASE("a rank that stops calling releases the ranks waiting in a small collective",
          "[emu][small][misuse]") {
  auto out = misuse_run(4, [](Communicator& c) {
    float x = 1.0f;
    for (int i = 0; i < 50; ++i) {
      if (c.rank() == 3 && i == 20) throw std::runtime_error("rank 3 gives up");
      c.all_reduce(&x, &x, 1, DataType::float32, ReduceOp::max());
    }
  });
  CHECK(out[3].type == "std::exception");
  for (int r = 0; r < 3; ++r) {
    INFO(out[static_cast<std::size_t>(r)].message);
    CHECK(out[static_cast<std::size_t>(r)].type == "AbortedError");
  }
}
