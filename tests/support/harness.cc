#include "support/harness.h"

namespace twinccl::testing {

void run_ranks(int nranks, const RankFunction& fn, const HarnessOptions& options) {
  RunOptions o;
  o.backend = "emu";
  o.world_size = nranks;
  o.schedule_path = options.schedule_path;
  o.algorithm = options.algorithm;
  o.timeout_s = options.timeout_s;
  run(o, fn);
}

}  // namespace twinccl::testing
