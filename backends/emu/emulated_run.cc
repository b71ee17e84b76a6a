// EmulatedRun (twinccl/emulated_run.h): the one launcher of an emulated run with simulated time.
//
// How it works. The constructor does everything that can fail before the ranks start: the
// emulator's options are checked once (emu::check_options), the topology is loaded, the emulator's
// default algorithm becomes the selection policy's choice on the loaded topology (default_choice.h,
// so the emulator runs what the replay plays) and every output path is checked (check_output_path:
// a missing folder, a folder given as the file, a NUL byte, no permission). With a topology or a
// trace path one trace recorder observes every rank's world communicator. After the run the trace
// and the timeline are written with write_output_file: a temporary file beside the path renamed
// over it, or a device written in place; a failed write throws and leaves no file.
#include "twinccl/emulated_run.h"

#include <ostream>
#include <utility>

#include "emu/default_choice.h"
#include "twinccl/errors.h"
#include "twinccl/output_file.h"
#include "twinccl/sim/replay.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/trace/recorder.h"
#include "twinccl/trace/trace_file.h"

namespace twinccl {

struct EmulatedRun::Parts {
  std::shared_ptr<const topo::Topology> topology;  // options.topology, loaded once
  std::unique_ptr<trace::TraceRecorder> recorder;  // with a topology or a trace path
  std::unique_ptr<trace::Trace> trace;             // the recorder's trace, after run()
};

EmulatedRun::EmulatedRun(const RunOptions& options, EmulatedRunCaller caller)
    : options_(options), caller_(std::move(caller)), parts_(std::make_unique<Parts>()) {
  emu::check_options(options_);
  if (!options_.topology.empty()) {
    parts_->topology =
        std::make_shared<const topo::Topology>(topo::load_topology(options_.topology));
    // The loaded object, never the name again (default_choice.h).
    auto choice = std::make_shared<const emu_backend::DefaultChoice>(parts_->topology);
    options_.default_algorithm = [choice](const OpDesc& op, const std::vector<int>& world_ranks) {
      return choice->algorithm(op, world_ranks);
    };
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

sim::ReplayResult EmulatedRun::replay(const std::function<bool()>& stop_requested) const {
  if (!parts_->topology)
    throw InvalidArgument("EmulatedRun::replay: no topology to replay the run on");
  // The emulator ran TWINCCL_ALGO where it exists, else the tuner's choice (default_choice.h):
  // the replay plays the same (its communicators' tuners choose the rest).
  sim::ReplayOptions replay_options;
  replay_options.algorithm = options_.algorithm;
  replay_options.stop_requested = stop_requested;
  return sim::replay(trace(), *parts_->topology, replay_options);
}

bool EmulatedRun::write_timeline(const sim::ReplayResult& result) const {
  if (!replays() || options_.timeline_path.empty()) return false;
  write_output_file(caller_.timeline_name, options_.timeline_path,
                    [&](std::ostream& f) { sim::write_replay_perfetto(result, f); });
  return true;
}

}  // namespace twinccl
