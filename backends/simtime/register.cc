// TwinCCL::simtime (twinccl_simtime): the simulated time of an emulated run, added to
// simulated_time.h's table when a program links this library. The symbol is extern "C" so that
// the library's link option -Wl,--undefined=twinccl_simtime_linked names it without C++ mangling;
// that option is what makes the linker take this file in from the static library.
//
// How it works. For a run with a topology, EmulatedRun's constructor (backends/emu/emulated_run.cc)
// calls make_of_run before any rank starts: the topology is loaded once (a bad name or file is a
// ConfigError then), the emulator's default algorithm becomes the selection policy's choice on
// that object (default_choice.h), and after a successful run() report() replays the recorded
// trace on it, prints the summary and writes the Perfetto timeline.
#include <memory>
#include <ostream>

#include "simtime/default_choice.h"
#include "simulated_time.h"
#include "twinccl/emulated_run.h"
#include "twinccl/sim/replay.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::simulated_time {
namespace {

class TopologyRun final : public OfRun {
 public:
  explicit TopologyRun(const RunOptions& options)
      : topology_(std::make_shared<const topo::Topology>(topo::load_topology(options.topology))),
        choice_(std::make_shared<const emu_backend::DefaultChoice>(topology_)) {}

  const topo::Topology& topology() const override { return *topology_; }

  emu::AlgorithmChooser default_algorithm() const override {
    // The loaded object, never the name again (default_choice.h).
    return [choice = choice_](const OpDesc& op, const std::vector<int>& world_ranks) {
      return choice->algorithm(op, world_ranks);
    };
  }

  void report(const EmulatedRun& run, std::ostream& out) const override {
    const sim::ReplayResult result = run.replay({});
    out << "twinccl: simulated time of this run on " << run.options().topology << "\n"
        << sim::summarize_replay(result);
    if (run.write_timeline(result)) {
      out << "twinccl: Perfetto timeline written to " << run.options().timeline_path
          << " (open in ui.perfetto.dev)\n";
    }
  }

 private:
  std::shared_ptr<const topo::Topology> topology_;
  std::shared_ptr<const emu_backend::DefaultChoice> choice_;
};

std::unique_ptr<OfRun> make_of_run(const RunOptions& options) {
  return std::make_unique<TopologyRun>(options);
}

}  // namespace
}  // namespace twinccl::simulated_time

extern "C" {
extern const bool twinccl_simtime_linked;
const bool twinccl_simtime_linked =
    twinccl::simulated_time::add(&twinccl::simulated_time::make_of_run);
}
