// One emulated run with simulated time, launched the one way: twinccl::run() for
// TWINCCL_BACKEND=emu and Python's twinccl.run both go through it.
//
//   EmulatedRun launch(options, {});   // options checked, topology loaded, output paths checked:
//   launch.run(fn);                    //   a bad one throws ConfigError before any rank runs
//   launch.save_trace();               // options.trace_path, written atomically
//   if (launch.replays()) launch.write_timeline(launch.replay({}));
//
// Every file (trace, timeline) goes through twinccl/output_file.h: checked before the run, then
// written to a temporary file beside the path and renamed, never half-written or lost; a device
// (/dev/null, /dev/full) is written in place and a failed write is an error.
//
// The simulated time (a topology, a timeline, replay() and write_timeline()) is TwinCCL::simtime,
// a library of its own: a program linked without it (TwinCCL::twinccl alone, no SimGrid) that
// asks for a topology or a timeline gets a ConfigError from the constructor naming what to link.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include "twinccl/emu/emulator.h"
#include "twinccl/run.h"

namespace twinccl::trace {
struct Trace;
}  // namespace twinccl::trace
namespace twinccl::sim {
struct ReplayResult;
}  // namespace twinccl::sim
namespace twinccl::simulated_time {
class OfRun;
}  // namespace twinccl::simulated_time

namespace twinccl {

// What differs between the callers of EmulatedRun, none of it an option of the run.
struct EmulatedRunCaller {
  std::string program;  // the trace's "program" field ("" for run(); "python")
  // How messages name the output paths: TWINCCL_TRACE / TWINCCL_TIMELINE for run(),
  // "twinccl.run(trace_path=...)" for Python.
  std::string trace_name = "TWINCCL_TRACE";
  std::string timeline_name = "TWINCCL_TIMELINE";
};

class EmulatedRun {
 public:
  // Checks every option (emu::check_options), loads options.topology, checks options.trace_path
  // and options.timeline_path (a timeline only with a topology) with check_output_path. Throws
  // ConfigError naming the option and its value; nothing has run then. A topology or a timeline
  // in a program linked without TwinCCL::simtime is a ConfigError too. With a topology,
  // options().default_algorithm becomes the topology's choice; when recording, on_rank_start
  // attaches the trace recorder first (then calls the caller's).
  EmulatedRun(const RunOptions& options, EmulatedRunCaller caller);
  ~EmulatedRun();
  EmulatedRun(const EmulatedRun&) = delete;
  EmulatedRun& operator=(const EmulatedRun&) = delete;

  // Runs fn on every rank (emu::run_world); recorded when a topology or trace path is set.
  void run(const RankFunction& fn);

  bool records() const;  // a topology or a trace path: the run's calls are recorded
  bool replays() const;  // a topology: the run is replayed on it
  // The recorded trace (records() only; after run()).
  const trace::Trace& trace() const;
  // Writes the trace to options.trace_path when set; true when written.
  bool save_trace() const;
  // The recorded trace replayed on the topology (replays() only), with TWINCCL_ALGO's algorithm
  // where it exists. `stop_requested` (may be empty) stops the replay (AbortedError).
  // TwinCCL::simtime (as write_timeline): link it to call them.
  sim::ReplayResult replay(const std::function<bool()>& stop_requested) const;
  // Writes the Perfetto timeline of `result` to options.timeline_path when set; true when written.
  bool write_timeline(const sim::ReplayResult& result) const;
  // What run() prints after a successful run (replays() only): the replay's summary on `out`, and
  // the timeline written where options().timeline_path says.
  void print_simulated_time(std::ostream& out) const;

  const RunOptions& options() const { return options_; }

 private:
  // The simulated time of this run (replays() only; made by TwinCCL::simtime), else nullptr.
  const simulated_time::OfRun* simulated_time_of_run() const;

  struct Parts;
  RunOptions options_;
  EmulatedRunCaller caller_;
  std::unique_ptr<Parts> parts_;
};

}  // namespace twinccl
