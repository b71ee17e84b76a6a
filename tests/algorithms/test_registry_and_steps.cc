// Registry lookups and their error messages, ring facts, buffer sizes, and step counts of the
// schedules (what the simulator times).
#include <catch2/catch.hpp>

#include "algorithms/algo_harness.h"
#include "twinccl/errors.h"

using namespace twinccl;
using Catch::Matchers::Contains;

namespace {

std::size_t steps_of(OpKind kind, const std::string& algorithm, int n, std::size_t count,
                     AlgorithmParams params = {}, int rank = 0) {
  const CollectiveSpec spec = algo_test::make_spec(kind, n, count, 0);
  return build_rank_schedule(spec, algorithm, params, rank).steps.size();
}

}  // namespace

TEST_CASE("registry lists algorithms per collective and picks ring or else direct",
          "[algorithms]") {
  std::vector<std::string> names;
  for (const Algorithm* a : algorithms_for(OpKind::all_reduce)) names.emplace_back(a->name());
  CHECK(names ==
        std::vector<std::string>{"ring", "tree", "halving_doubling", "nvls", "hierarchical"});
  CHECK(default_algorithm(OpKind::all_reduce) == "ring");
  CHECK(default_algorithm(OpKind::reduce_scatter_v) == "ring");
  CHECK(default_algorithm(OpKind::all_to_all) == "direct");
  CHECK(default_algorithm(OpKind::scatter_v) == "direct");
  CHECK(find_algorithm(OpKind::all_gather, "bruck").name() == "bruck");
  for (const Algorithm* a : all_algorithms()) CHECK_FALSE(a->description().empty());
  const CollectiveSpec barrier = algo_test::make_spec(OpKind::barrier, 4, 0);
  CHECK(build_schedule(barrier, default_algorithm(OpKind::barrier), {}).ranks.size() == 4);
}

TEST_CASE("unknown or inapplicable algorithms are refused with the available ones named",
          "[algorithms]") {
  CHECK_THROWS_MATCHES(
      find_algorithm(OpKind::all_reduce, "foo"), InvalidArgument,
      Catch::Matchers::Message("unknown algorithm 'foo' for all_reduce; available: ring, tree, "
                               "halving_doubling, nvls, hierarchical"));
  CHECK_THROWS_WITH(find_algorithm(OpKind::all_gather_v, "halving_doubling"),
                    Contains("algorithm 'halving_doubling' does not apply to all_gather_v") &&
                        Contains("available for all_gather_v: ring, direct, bruck"));
  CollectiveSpec spec = algo_test::make_spec(OpKind::all_reduce, 6, 10);
  CHECK_THROWS_WITH(build_schedule(spec, "hierarchical", {.ranks_per_node = 4}),
                    Contains("ranks_per_node=4 does not divide nranks=6"));
  CHECK_THROWS_WITH(build_schedule(spec, "ring", {.channels = 0}), Contains("channels=0"));
  spec.kind = OpKind::reduce;
  spec.root = 6;
  CHECK_THROWS_WITH(build_schedule(spec, "ring", {}), Contains("root=6 out of range [0, 6)"));
  CHECK_THROWS_AS(
      build_rank_schedule(algo_test::make_spec(OpKind::all_reduce, 4, 8), "ring", {}, 4),
      InvalidArgument);
}

TEST_CASE("ring chunks and fold order are the documented ones", "[algorithms]") {
  CHECK(ring_chunk(10, 4, 0).begin == 0);
  CHECK(ring_chunk(10, 4, 0).end == 2);
  CHECK(ring_chunk(10, 4, 1).end == 5);
  CHECK(ring_chunk(10, 4, 3).end == 10);
  CHECK(ring_chunk(3, 4, 0).size() == 0);
  std::size_t total = 0;
  for (int c = 0; c < 7; ++c) total += ring_chunk(1000, 7, c).size();
  CHECK(total == 1000);
  CHECK(ring_fold_rank(4, 1, 0) == 2);
  CHECK(ring_fold_rank(4, 1, 3) == 1);
  CHECK(ring_fold_rank(4, 3, 0) == 0);
  CHECK_THROWS_AS(ring_chunk(10, 4, 4), InvalidArgument);
  CHECK_THROWS_AS(ring_fold_rank(4, 0, 4), InvalidArgument);
}

TEST_CASE("input and output sizes follow the NCCL counts", "[algorithms]") {
  const auto sizes = [](OpKind kind, int rank) {
    CollectiveSpec spec = algo_test::make_spec(kind, 4, 5, 2);
    return std::pair{input_elements(spec, rank), output_elements(spec, rank)};
  };
  CHECK(sizes(OpKind::all_reduce, 0) == std::pair<std::size_t, std::size_t>{5, 5});
  CHECK(sizes(OpKind::reduce_scatter, 1) == std::pair<std::size_t, std::size_t>{20, 5});
  CHECK(sizes(OpKind::all_gather, 1) == std::pair<std::size_t, std::size_t>{5, 20});
  CHECK(sizes(OpKind::broadcast, 1) == std::pair<std::size_t, std::size_t>{0, 5});
  CHECK(sizes(OpKind::broadcast, 2) == std::pair<std::size_t, std::size_t>{5, 5});
  CHECK(sizes(OpKind::reduce, 1) == std::pair<std::size_t, std::size_t>{5, 0});
  CHECK(sizes(OpKind::gather, 2) == std::pair<std::size_t, std::size_t>{5, 20});
  CHECK(sizes(OpKind::scatter, 3) == std::pair<std::size_t, std::size_t>{0, 5});
  CHECK(sizes(OpKind::all_to_all, 3) == std::pair<std::size_t, std::size_t>{20, 20});
  // make_spec's uneven counts for count 5: 5, 0, 5, 6
  CHECK(sizes(OpKind::all_gather_v, 3) == std::pair<std::size_t, std::size_t>{6, 16});
  CHECK(sizes(OpKind::reduce_scatter_v, 1) == std::pair<std::size_t, std::size_t>{16, 0});
  CollectiveSpec gapped = algo_test::make_spec(OpKind::gather_v, 4, 5, 0);
  gapped.displs = {30, 20, 10, 0};
  CHECK(output_elements(gapped, 0) == 35);
  CHECK(output_elements(gapped, 1) == 0);
}

TEST_CASE("a spec whose sizes overflow or whose displacements are short is refused",
          "[algorithms]") {
  // Before: nranks x count wrapped to a small size, a short displacement list threw
  // std::out_of_range (gather_v) or was read past its end (all_to_all_v).
  CollectiveSpec huge = algo_test::make_spec(OpKind::all_gather, 4, ~std::size_t{0} / 2, 0);
  CHECK_THROWS_WITH(output_elements(huge, 0),
                    Contains("all_gather: nranks x count") && Contains("overflows"));
  CollectiveSpec gapped = algo_test::make_spec(OpKind::gather_v, 4, 5, 0);
  gapped.displs = {0, 5};
  CHECK_THROWS_WITH(output_elements(gapped, 0), Contains("gather_v: 2 displs for 4 counts"));
  CollectiveSpec a2av = algo_test::make_spec(OpKind::all_to_all_v, 3, 2, 0);
  a2av.send_displs = {0, 1};
  CHECK_THROWS_AS(input_elements(a2av, 1), InvalidArgument);
}

TEST_CASE("step counts of the schedules", "[algorithms]") {
  for (int n : {2, 3, 4, 7, 8, 16}) {
    INFO("n=" << n);
    const auto un = static_cast<std::size_t>(n);
    CHECK(steps_of(OpKind::all_reduce, "ring", n, 1000) == 2 * (un - 1));
    CHECK(steps_of(OpKind::reduce_scatter, "ring", n, 100) == un - 1);
    CHECK(steps_of(OpKind::all_gather, "ring", n, 100) == un - 1);
    CHECK(steps_of(OpKind::all_to_all, "direct", n, 100) == 1);
    CHECK(steps_of(OpKind::all_reduce, "nvls", n, 1000) == un + 1);
    std::size_t log2 = 0;
    while ((std::size_t{1} << log2) < un) ++log2;
    CHECK(steps_of(OpKind::all_gather, "bruck", n, 100) == log2);
    CHECK(steps_of(OpKind::all_gather, "pat", n, 100) == log2);
    CHECK(steps_of(OpKind::reduce_scatter, "pat", n, 100) == log2);
    if ((n & (n - 1)) == 0) {
      CHECK(steps_of(OpKind::all_reduce, "halving_doubling", n, 1000) == 2 * log2);
    }
    // Chain: the root sends (1 step), middle ranks receive then forward (2), the last receives.
    CHECK(steps_of(OpKind::broadcast, "ring", n, 100, {}, 0) == 1);
    CHECK(steps_of(OpKind::broadcast, "ring", n, 100, {}, n - 1) == 1);
    if (n > 2)
      CHECK(steps_of(OpKind::reduce, "ring", n, 100, {}, 2) == 2);  // root 0: rank 2 is mid-chain
    // Pipelining: ring all_reduce with 10 pieces per transfer runs as a wavefront.
    const std::size_t per_chunk = 70;
    CHECK(steps_of(OpKind::all_reduce, "ring", n, per_chunk * un, {.chunk_elements = 7}) ==
          2 * (un - 1) + 9);
  }
  CHECK(steps_of(OpKind::all_reduce, "ring", 1, 1000) == 1);  // a local copy
  CHECK(steps_of(OpKind::all_reduce, "ring", 4, 0) == 0);
}

TEST_CASE("channels split every transfer over the same peers", "[algorithms]") {
  const CollectiveSpec spec = algo_test::make_spec(OpKind::all_reduce, 4, 1200);
  const RankSchedule one = build_rank_schedule(spec, "ring", {}, 1);
  const RankSchedule three = build_rank_schedule(spec, "ring", {.channels = 3}, 1);
  REQUIRE(one.steps.size() == three.steps.size());
  for (std::size_t k = 0; k < one.steps.size(); ++k) {
    REQUIRE(three.steps[k].ops.size() == 3 * one.steps[k].ops.size());
    for (std::size_t i = 0; i < three.steps[k].ops.size(); ++i) {
      CHECK(three.steps[k].ops[i].channel == static_cast<int>(i % 3));
      CHECK(three.steps[k].ops[i].peer == one.steps[k].ops[i / 3].peer);
    }
  }
}
