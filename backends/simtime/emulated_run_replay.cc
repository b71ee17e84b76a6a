// EmulatedRun's simulated-time members (twinccl/emulated_run.h), defined in TwinCCL::simtime: a
// program that calls them links this library, and an emulator-only program links none of the
// simulator (backends/simulated_time.h).
#include <ostream>

#include "simulated_time.h"
#include "twinccl/emulated_run.h"
#include "twinccl/errors.h"
#include "twinccl/output_file.h"
#include "twinccl/sim/replay.h"

namespace twinccl {

sim::ReplayResult EmulatedRun::replay(const std::function<bool()>& stop_requested) const {
  const simulated_time::OfRun* simulated = simulated_time_of_run();
  if (!simulated) throw InvalidArgument("EmulatedRun::replay: no topology to replay the run on");
  // The emulator ran TWINCCL_ALGO where it exists, else the selection policy's choice
  // (default_choice.h): the replay plays the same (its communicators' tuners choose the rest).
  sim::ReplayOptions replay_options;
  replay_options.algorithm = options_.algorithm;
  replay_options.stop_requested = stop_requested;
  return sim::replay(trace(), simulated->topology(), replay_options);
}

bool EmulatedRun::write_timeline(const sim::ReplayResult& result) const {
  if (!replays() || options_.timeline_path.empty()) return false;
  write_output_file(caller_.timeline_name, options_.timeline_path,
                    [&](std::ostream& f) { sim::write_replay_perfetto(result, f); });
  return true;
}

}  // namespace twinccl
