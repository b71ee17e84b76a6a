#include "emu/simulated_time.h"

#include <ostream>

#include "twinccl/errors.h"
#include "twinccl/output_file.h"
#include "twinccl/sim/replay.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/trace/trace_file.h"

namespace twinccl::emu_backend {

SimulatedTime::SimulatedTime(const RunOptions& options) : options_(options) {
  if (options.topology.empty() && options.trace_path.empty()) return;
  // Load the topology and check the output paths now: a misspelled preset or a folder that does
  // not exist fails before the program runs, not after it (with the run's result lost).
  if (!options.topology.empty()) (void)topo::load_topology(options.topology);
  if (!options.trace_path.empty()) check_output_path("TWINCCL_TRACE", options.trace_path);
  if (!options.topology.empty() && !options.timeline_path.empty())
    check_output_path("TWINCCL_TIMELINE", options.timeline_path);
  trace::TraceRecorderOptions recorder_options;
  recorder_options.p2p_per_peer_streams = options.p2p_per_peer_streams;  // the replay orders alike
  recorder_ = std::make_unique<trace::TraceRecorder>(options.world_size, recorder_options);
}

void SimulatedTime::record(Communicator& comm) const {
  if (recorder_) recorder_->record(comm);
}

void SimulatedTime::report(std::ostream& out) const {
  if (!recorder_) return;
  const sim::Trace trace = recorder_->trace();
  if (!options_.trace_path.empty()) {
    write_output_file("TWINCCL_TRACE", options_.trace_path,
                      [&](std::ostream& f) { f << trace::to_json(trace); });
    out << "twinccl: trace written to " << options_.trace_path << " (twinccl replay "
        << options_.trace_path << " --topology A --topology B)\n";
  }
  if (options_.topology.empty()) return;
  // The emulator ran TWINCCL_ALGO where it exists, else the tuner's choice (default_choice.h):
  // the replay plays the same (its communicators' tuners choose the rest).
  sim::ReplayOptions replay_options;
  replay_options.algorithm = options_.algorithm;
  sim::ReplayResult result =
      sim::replay(trace, topo::load_topology(options_.topology), replay_options);
  out << "twinccl: simulated time of this run on " << options_.topology << "\n"
      << sim::summarize_replay(result);
  if (!options_.timeline_path.empty()) {
    write_output_file("TWINCCL_TIMELINE", options_.timeline_path,
                      [&](std::ostream& f) { sim::write_replay_perfetto(result, f); });
    out << "twinccl: Perfetto timeline written to " << options_.timeline_path
        << " (open in ui.perfetto.dev)\n";
  }
}

}  // namespace twinccl::emu_backend
