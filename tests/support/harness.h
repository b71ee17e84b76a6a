// The ranks-as-threads test harness shared by every emulator test: runs `fn` on n emulated ranks
// and rethrows the first rank's exception (the others get AbortedError instead of hanging).
//
//   run_ranks(8, [](Communicator& c) { ... REQUIRE(...) ... });
#pragma once

#include <functional>

#include "twinccl/run.h"

namespace twinccl::testing {

struct HarnessOptions {
  bool schedule_path = false;  // force the schedule path (no direct fast path)
  std::string algorithm;       // force an algorithm where it exists
  double timeout_s = 60.0;
};

void run_ranks(int nranks, const RankFunction& fn, const HarnessOptions& options = {});

}  // namespace twinccl::testing
