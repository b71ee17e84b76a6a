// run_emulated: twinccl::run() for TWINCCL_BACKEND=emu, through the one launcher of emulated runs
// (twinccl/emulated_run.h, which Python's twinccl.run uses too): options, topology and output
// paths checked before any rank starts; after a successful run the trace saved and, with a
// topology (TwinCCL::simtime), the replay's summary printed and the Perfetto timeline written.
#include "emu/launch.h"

#include <iostream>

#include "twinccl/emulated_run.h"

namespace twinccl::emu_backend {

void run_emulated(const RunOptions& options, const RankFunction& fn) {
  EmulatedRun launch(options, {});
  launch.run(fn);
  std::ostream& out = std::cout;
  if (launch.save_trace()) {
    out << "twinccl: trace written to " << options.trace_path << " (twinccl replay "
        << options.trace_path << " --topology A --topology B)\n";
  }
  if (launch.replays()) launch.print_simulated_time(out);
}

}  // namespace twinccl::emu_backend
