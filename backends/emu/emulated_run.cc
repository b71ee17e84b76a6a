// EmulatedRun (twinccl/emulated_run.h): the one launcher of an emulated run with simulated time.
//
// How it works. The constructor does everything that can fail before the ranks start: the
// emulator's options are checked once (emu::check_options); with a topology, the simulated time
// of the run is made by TwinCCL::simtime (simulated_time.h: the topology loaded once, the
// emulator's default algorithm the selection policy's choice on it, so the emulator runs what the
// replay plays), or a ConfigError says to link it; every output path is checked
// (check_output_path: a missing folder, a folder given as the file, a NUL byte, no permission).
// With a topology or a trace path one trace recorder observes every rank's world communicator.
// After the run the trace is written with write_output_file: a temporary file beside the path
// renamed over it, or a device written in place; a failed write throws and leaves no file. The
// replay and the timeline are TwinCCL::simtime's (backends/simtime/emulated_run_replay.cc).
#include "twinccl/emulated_run.h"

#include <ostream>
#include <utility>

#include "simulated_time.h"
#include "twinccl/errors.h"
#include "twinccl/output_file.h"
#include "twinccl/trace/recorder.h"
#include "twinccl/trace/trace_file.h"

namespace twinccl {

struct EmulatedRun::Parts {
  std::unique_ptr<simulated_time::OfRun> simulated;  // with a topology (TwinCCL::simtime)
  std::unique_ptr<trace::TraceRecorder> recorder;    // with a topology or a trace path
  std::unique_ptr<trace::Trace> trace;               // the recorder's trace, after run()
};

namespace {

// What a program linked without TwinCCL::simtime is told when it asks for simulated time.
[[noreturn]] void simulated_time_not_linked(const RunOptions& options,
                                            const EmulatedRunCaller& caller) {
  const std::string asked =
      !options.topology.empty()
          ? "TWINCCL_TOPOLOGY='" + shown_value(options.topology) + "'"
          : caller.timeline_name + "='" + shown_value(options.timeline_path) + "'";
  throw ConfigError(asked +
                    " asks for the simulated time of the run, but this program was linked "
                    "without it: link TwinCCL::simtime (CMake; pkg-config twinccl-simtime), "
                    "which brings the simulator and SimGrid, or record the run with "
                    "TWINCCL_TRACE=FILE and replay it with `twinccl replay FILE --topology T`");
}

}  // namespace

EmulatedRun::EmulatedRun(const RunOptions& options, EmulatedRunCaller caller)
    : options_(options), caller_(std::move(caller)), parts_(std::make_unique<Parts>()) {
  emu::check_options(options_);
  const simulated_time::Make make_simulated_time = simulated_time::linked();
  if (!make_simulated_time && (!options_.topology.empty() || !options_.timeline_path.empty()))
    simulated_time_not_linked(options_, caller_);
  if (options_.topology.empty() && !options_.timeline_path.empty())
    throw ConfigError(caller_.timeline_name + "='" + shown_value(options_.timeline_path) +
                      "' asks for the timeline of the simulated run, which needs a topology "
                      "too: TWINCCL_TOPOLOGY=NAME or twinccl.run(topology=NAME) (`twinccl topo "
                      "list` names them)");
  if (!options_.topology.empty()) {
    parts_->simulated = make_simulated_time(options_);
    options_.default_algorithm = parts_->simulated->default_algorithm();
  }
  if (!options_.trace_path.empty()) check_output_path(caller_.trace_name, options_.trace_path);
  if (replays() && !options_.timeline_path.empty())
    check_output_path(caller_.timeline_name, options_.timeline_path);
  if (!records()) return;
  trace::TraceRecorderOptions recorder_options;
  recorder_options.program = caller_.program;
  recorder_options.p2p_per_peer_streams = options_.p2p_per_peer_streams;  // the replay orders alike
  parts_->recorder = std::make_unique<trace::TraceRecorder>(options_.world_size, recorder_options);
  trace::TraceRecorder* recorder = parts_->recorder.get();
  options_.on_rank_start = [recorder, theirs = options_.on_rank_start](Communicator& world) {
    recorder->record(world);
    if (theirs) theirs(world);
  };
}

EmulatedRun::~EmulatedRun() = default;

bool EmulatedRun::records() const { return replays() || !options_.trace_path.empty(); }
bool EmulatedRun::replays() const { return !options_.topology.empty(); }

void EmulatedRun::run(const RankFunction& fn) {
  emu::run_world(options_, fn);
  if (parts_->recorder) parts_->trace = std::make_unique<trace::Trace>(parts_->recorder->trace());
}

const trace::Trace& EmulatedRun::trace() const {
  if (!parts_->trace)
    throw InvalidArgument(
        "EmulatedRun::trace: no trace (the run was not recorded: no topology or trace path, or "
        "it has not run)");
  return *parts_->trace;
}

bool EmulatedRun::save_trace() const {
  if (options_.trace_path.empty()) return false;
  const trace::Trace& t = trace();
  write_output_file(caller_.trace_name, options_.trace_path,
                    [&](std::ostream& f) { f << trace::to_json(t); });
  return true;
}

void EmulatedRun::print_simulated_time(std::ostream& out) const {
  if (!parts_->simulated)
    throw InvalidArgument("EmulatedRun::print_simulated_time: no topology to replay the run on");
  parts_->simulated->report(*this, out);
}

const simulated_time::OfRun* EmulatedRun::simulated_time_of_run() const {
  return parts_->simulated.get();
}

}  // namespace twinccl
