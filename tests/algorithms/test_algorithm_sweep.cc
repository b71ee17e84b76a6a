// Every registered algorithm x every collective it serves x world sizes x counts x channels x
// pipelining chunk: check_schedule passes and the interpreter's result equals the reference
// (float32 fractions compared bitwise for algorithms that fold in the ring order, small integers
// otherwise), out of place and in place.
#include <catch2/catch.hpp>

#include "algorithms/algo_harness.h"
#include "twinccl/errors.h"

using namespace twinccl;
using algo_test::Setup;

namespace {

bool has_in_place_form(OpKind kind) {
  return kind == OpKind::all_reduce || kind == OpKind::reduce_scatter ||
         kind == OpKind::all_gather || kind == OpKind::broadcast || kind == OpKind::reduce;
}

bool uses_ranks_per_node(const std::string& algorithm) {
  return algorithm == "tree" || algorithm == "hierarchical";
}

// Runs one setup, returns false (after reporting) when the result is wrong.
void check_one(const Setup& setup) {
  INFO(algo_test::describe(setup));
  const auto inputs = algo_test::make_inputs(setup);
  const auto expected = algo_test::expected_outputs(setup, inputs);
  std::vector<algo_test::Bytes> got;
  REQUIRE_NOTHROW(got = algo_test::run_algorithm(setup, inputs));
  for (std::size_t r = 0; r < got.size(); ++r) {
    INFO("rank " << r);
    REQUIRE(got[r] == expected[r]);
  }
}

void sweep(const Algorithm& algorithm) {
  const std::string algo_name(algorithm.name());
  for (OpKind kind : algorithm.collectives()) {
    if (kind == OpKind::barrier) continue;
    for (int n : {1, 2, 3, 4, 7, 8, 16}) {
      std::vector<int> rpns = {0};
      if (uses_ranks_per_node(algo_name)) rpns = {0, 1, 2, 4, 8};
      for (int rpn : rpns) {
        for (std::size_t count : {0, 1, 5, 17, 1000}) {
          for (int channels : {1, 3}) {
            for (std::size_t chunk : {0, 7}) {
              Setup setup;
              setup.spec = algo_test::make_spec(kind, n, count, n / 2);
              setup.algorithm = algo_name;
              setup.params = {.channels = channels, .chunk_elements = chunk, .ranks_per_node = rpn};
              if (!algorithm.why_not(setup.spec, setup.params).empty()) continue;
              setup.dtype = DataType::float32;
              setup.values = algo_test::folds_in_ring_order(algo_name)
                                 ? algo_test::Values::fractions
                                 : algo_test::Values::small_integers;
              check_one(setup);
              if (has_in_place_form(kind)) {
                setup.in_place = true;
                check_one(setup);
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("every algorithm gives the reference result on every collective it serves",
          "[algorithms]") {
  for (const Algorithm* algorithm : all_algorithms()) {
    SECTION(std::string(algorithm->name())) { sweep(*algorithm); }
  }
}
