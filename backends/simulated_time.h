// The simulated time of an emulated run (TWINCCL_TOPOLOGY): its own library, TwinCCL::simtime
// (twinccl_simtime, backends/simtime/), which adds itself here when a program links it, as the
// NCCL backend adds itself to backend_registry.h. So an emulator-only program (TwinCCL::twinccl)
// links neither the simulator nor SimGrid, and asking it for a topology or a timeline is a
// ConfigError naming what to link (EmulatedRun's constructor), never a silent no-op.
//
//   // backends/simtime/register.cc (library twinccl_simtime):
//   extern "C" const bool twinccl_simtime_linked = twinccl::simulated_time::add(&make_of_run);
//   // backends/emu/emulated_run.cc, before any rank runs:
//   if (simulated_time::Make make = simulated_time::linked()) of_run = make(options);
#pragma once

#include <iosfwd>
#include <memory>

#include "twinccl/emu/emulator.h"
#include "twinccl/run.h"

namespace twinccl {
class EmulatedRun;
}  // namespace twinccl
namespace twinccl::topo {
struct Topology;
}  // namespace twinccl::topo

namespace twinccl::simulated_time {

// The simulated time of one emulated run on its topology, made before any rank runs.
class OfRun {
 public:
  virtual ~OfRun() = default;
  // The topology of the run (RunOptions::topology), loaded once.
  virtual const topo::Topology& topology() const = 0;
  // The emulator's default algorithm on that topology: the selection policy's choice, which the
  // replay plays for the same call (backends/simtime/default_choice.h).
  virtual emu::AlgorithmChooser default_algorithm() const = 0;
  // After a successful run() (backends/emu/launch.cc): replays `run`'s trace, prints the summary to
  // `out` and writes the timeline (RunOptions::timeline_path, when set).
  virtual void report(const EmulatedRun& run, std::ostream& out) const = 0;
};

// Makes the simulated time of a run with options.topology set; throws ConfigError for a topology
// that does not load.
using Make = std::unique_ptr<OfRun> (*)(const RunOptions& options);

// Registers TwinCCL::simtime (at static initialization). Returns true, so that it can initialize
// a constant; a second registration keeps the first.
bool add(Make make);

// The registered maker, or nullptr when the program was linked without TwinCCL::simtime.
Make linked();

}  // namespace twinccl::simulated_time
