// Reduce ops x data types through every reducing algorithm, an independent int32 reference, and
// the checker's and interpreter's own error paths on hand-written broken schedules.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>

#include "algorithms/algo_harness.h"
#include "twinccl/errors.h"
#include "twinccl/reduction.h"
#include "twinccl/schedule_interpreter.h"

using namespace twinccl;
using algo_test::Setup;
using Catch::Matchers::Contains;

namespace {

std::vector<ReduceOp> ops_for(ReduceKind kind, int n) {
  std::vector<ReduceOp> ops;
  for (int r = 0; r < n; ++r) {
    ops.push_back(kind == ReduceKind::premul_sum ? ReduceOp::premul_sum(r % 3 - 1)
                                                 : ReduceOp{kind, 1.0});
  }
  return ops;
}

}  // namespace

TEST_CASE("reduce ops and data types through every reducing algorithm", "[algorithms]") {
  const std::vector<DataType> dtypes = {DataType::int8,    DataType::int32,      DataType::uint64,
                                        DataType::float16, DataType::bfloat16,   DataType::float32,
                                        DataType::float64, DataType::float8_e4m3};
  const std::vector<ReduceKind> kinds = {ReduceKind::sum, ReduceKind::prod, ReduceKind::min,
                                         ReduceKind::max, ReduceKind::avg,  ReduceKind::premul_sum};
  for (const Algorithm* algorithm : all_algorithms()) {
    const std::string algo_name(algorithm->name());
    const bool ring_order = algo_test::folds_in_ring_order(algo_name);
    for (OpKind kind : algorithm->collectives()) {
      if (!is_reducing(kind)) continue;
      for (int n : {1, 3, 4, 7}) {
        for (DataType dtype : dtypes) {
          for (ReduceKind op : kinds) {
            // Order-dependent float results are compared only where the fold order is the
            // ring's; elsewhere small integers make every order exact (scaling is not).
            const bool scales = op == ReduceKind::premul_sum || op == ReduceKind::avg;
            if (!ring_order && is_floating(dtype) && scales) continue;
            if (op == ReduceKind::premul_sum && dtype == DataType::uint64) continue;
            Setup setup;
            setup.spec = algo_test::make_spec(kind, n, 17, n - 1);
            setup.algorithm = algo_name;
            setup.params = {.channels = 2, .chunk_elements = 5};
            if (!algorithm->why_not(setup.spec, setup.params).empty()) continue;
            setup.dtype = dtype;
            setup.ops = ops_for(op, n);
            setup.values =
                ring_order ? algo_test::Values::fractions : algo_test::Values::small_integers;
            INFO(algo_test::describe(setup));
            const auto inputs = algo_test::make_inputs(setup);
            const auto expected = algo_test::expected_outputs(setup, inputs);
            const auto got = algo_test::run_algorithm(setup, inputs);
            for (std::size_t r = 0; r < got.size(); ++r) REQUIRE(got[r] == expected[r]);
          }
        }
      }
    }
  }
}

TEST_CASE("int32 all_reduce sums equal plain integer sums for every algorithm", "[algorithms]") {
  for (const Algorithm* algorithm : algorithms_for(OpKind::all_reduce)) {
    for (int n : {2, 7, 8}) {
      Setup setup;
      setup.spec = algo_test::make_spec(OpKind::all_reduce, n, 1000);
      setup.algorithm = std::string(algorithm->name());
      setup.params = {.channels = 3, .ranks_per_node = n == 8 ? 4 : 0};
      INFO(algo_test::describe(setup));
      const auto inputs = algo_test::make_inputs(setup);
      const auto got = algo_test::run_algorithm(setup, inputs);
      for (std::size_t i = 0; i < 1000; ++i) {
        std::int64_t sum = 0;
        for (const auto& in : inputs) {
          std::int32_t x = 0;
          std::memcpy(&x, in.data() + i * sizeof x, sizeof x);
          sum += x;
        }
        for (const auto& out : got) {
          std::int32_t y = 0;
          std::memcpy(&y, out.data() + i * sizeof y, sizeof y);
          REQUIRE(y == sum);
        }
      }
    }
  }
}

namespace {

// Two ranks, count 4 all_gather, hand-written.
Schedule two_rank_schedule() {
  Schedule s;
  s.algorithm = "handmade";
  s.spec = algo_test::make_spec(OpKind::all_gather, 2, 4);
  s.ranks.resize(2);
  for (int r = 0; r < 2; ++r) {
    Step step;
    StepOp send;
    send.kind = StepOpKind::send;
    send.peer = 1 - r;
    send.src = {BufferKind::input, 0, 4};
    StepOp recv;
    recv.kind = StepOpKind::recv;
    recv.peer = 1 - r;
    recv.dst = {BufferKind::output, static_cast<std::size_t>(1 - r) * 4, 4};
    StepOp copy;
    copy.kind = StepOpKind::copy;
    copy.src = {BufferKind::input, 0, 4};
    copy.dst = {BufferKind::output, static_cast<std::size_t>(r) * 4, 4};
    step.ops = {send, recv, copy};
    s.ranks[static_cast<std::size_t>(r)].steps.push_back(step);
  }
  return s;
}

}  // namespace

TEST_CASE("check_schedule names the broken rank and step and op", "[algorithms]") {
  REQUIRE_NOTHROW(check_schedule(two_rank_schedule()));
  {
    Schedule s = two_rank_schedule();
    s.ranks[1].steps[0].ops[1].dst.offset = 6;
    CHECK_THROWS_WITH(
        check_schedule(s),
        Contains("rank 1 step 0 op 1") && Contains("slice output[6, 10) outside the output of 8"));
  }
  {
    Schedule s = two_rank_schedule();
    s.ranks[0].steps[0].ops[0].src.count = 3;
    CHECK_THROWS_AS(check_schedule(s), InternalError);
    CHECK_THROWS_WITH(check_schedule(s), Contains("carries 3 elements") && Contains("receives 4"));
  }
  {
    Schedule s = two_rank_schedule();
    s.ranks[0].steps[0].ops.erase(s.ranks[0].steps[0].ops.begin());  // rank 0 never sends
    CHECK_THROWS_WITH(check_schedule(s), Contains("receives 1 messages from rank 0"));
  }
  {
    Schedule s = two_rank_schedule();
    s.ranks[0].steps[0].ops[1].dst.offset = 0;  // recv overwrites the copy's destination
    CHECK_THROWS_WITH(check_schedule(s),
                      Contains("rank 0 step 0") && Contains("of the same step also uses"));
  }
  {
    // Sends wait for their receiver: each rank sends in step 0 and receives in step 1.
    Schedule s = two_rank_schedule();
    for (auto& rank : s.ranks) {
      Step later;
      later.ops = {rank.steps[0].ops[1]};
      rank.steps[0].ops.erase(rank.steps[0].ops.begin() + 1);
      rank.steps.push_back(later);
    }
    CHECK_THROWS_WITH(check_schedule(s), Contains("deadlock") && Contains("rank 0 at step 0") &&
                                             Contains("sends to rank 1"));
  }
}

TEST_CASE("interpret_schedule reports stalls and leftovers and missing inputs", "[algorithms]") {
  std::vector<std::int32_t> in0(4, 1), in1(4, 2), out0(8), out1(8);
  const std::vector<RankBuffers> buffers = {{in0.data(), out0.data()}, {in1.data(), out1.data()}};
  interpret_schedule(two_rank_schedule(), DataType::int32, nullptr, buffers);
  CHECK(out0 == std::vector<std::int32_t>{1, 1, 1, 1, 2, 2, 2, 2});
  CHECK(out1 == out0);
  {
    Schedule s = two_rank_schedule();
    s.ranks[0].steps[0].ops.erase(s.ranks[0].steps[0].ops.begin());
    CHECK_THROWS_WITH(interpret_schedule(s, DataType::int32, nullptr, buffers),
                      Contains("stuck") && Contains("rank 1 at step 0 waits for rank(s) 0"));
  }
  {
    Schedule s = two_rank_schedule();
    s.ranks[0].steps[0].ops.erase(s.ranks[0].steps[0].ops.begin() + 1);
    CHECK_THROWS_WITH(interpret_schedule(s, DataType::int32, nullptr, buffers),
                      Contains("rank 1 sent 1 message(s) rank 0 never received"));
  }
  CHECK_THROWS_AS(interpret_schedule(two_rank_schedule(), DataType::int32, nullptr,
                                     std::span(buffers).first(1)),
                  InvalidArgument);
  const Schedule ring = build_schedule(algo_test::make_spec(OpKind::all_reduce, 2, 4), "ring", {});
  CHECK_THROWS_WITH(interpret_schedule(ring, DataType::int32, nullptr, buffers),
                    Contains("no Reduction"));
}
