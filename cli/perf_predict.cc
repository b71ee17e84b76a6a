#include "perf_predict.h"

#include "twinccl/errors.h"

namespace twinccl::cli {

PerfReport run_predicted_perf(const PerfOptions& /*options*/) {
  throw ConfigError("--backend sim: the simulator is not built into this version yet; use --backend emu");
}

}  // namespace twinccl::cli
