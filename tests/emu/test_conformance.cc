// Conformance: every collective x dtype x reduce op x world size x count x in/out-of-place, on
// the fast path and on the schedule path, against the sequential reference model, bit for bit.
#include <catch2/catch.hpp>

#include "conformance_cases.h"
#include "support/harness.h"

using namespace twinccl;
using namespace twinccl::testing;

namespace {

void sweep(int nranks, bool schedule_path) {
  for (DataType dtype : kAllDataTypes) {
    std::vector<Case> cases = sweep_cases(nranks, dtype);
    INFO("world size " << nranks << (schedule_path ? " schedule path " : " fast path ")
                       << name(dtype));
    REQUIRE_NOTHROW(run_ranks(
        nranks,
        [&](Communicator& comm) {
          for (const Case& c : cases) run_case(comm, c);
        },
        HarnessOptions{schedule_path, "", 60.0}));
  }
}

}  // namespace

TEST_CASE("conformance on the fast path", "[emu][conformance]") {
  int nranks = GENERATE(1, 2, 3, 4, 7, 8, 16);
  sweep(nranks, false);
}

TEST_CASE("conformance on the schedule path", "[emu][conformance]") {
  int nranks = GENERATE(1, 2, 3, 4, 7, 8, 16);
  sweep(nranks, true);
}

TEST_CASE("conformance on sub-communicators", "[emu][conformance]") {
  int nranks = GENERATE(2, 3, 7, 8);
  // Split into two groups (even, odd ranks; keys reversed) and sweep float32 and int32 on each.
  for (DataType dtype : {DataType::float32, DataType::int32, DataType::bfloat16}) {
    int even = (nranks + 1) / 2, odd = nranks / 2;
    std::vector<Case> even_cases = sweep_cases(even, dtype);
    std::vector<Case> odd_cases = odd > 0 ? sweep_cases(odd, dtype) : std::vector<Case>{};
    INFO("world " << nranks << " " << name(dtype));
    REQUIRE_NOTHROW(run_ranks(nranks, [&](Communicator& world) {
      auto sub = world.split(world.rank() % 2, -world.rank());
      if (!sub) throw std::runtime_error("split returned no communicator");
      const auto& cases = world.rank() % 2 == 0 ? even_cases : odd_cases;
      if (sub->size() != (world.rank() % 2 == 0 ? even : odd))
        throw std::runtime_error("sub-communicator size");
      // keys are -rank: the highest world rank gets sub-rank 0
      for (const Case& c : cases) run_case(*sub, c);
      world.barrier();
    }));
  }
}
