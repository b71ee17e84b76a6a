// The one selection policy: which algorithm, protocol and channels a call uses. The Tuner ranks;
// this owns every rule around it: a forced name and where it applies, the fallbacks (send/recv,
// barrier, uneven collectives, more ranks than the topology has GPUs, no topology), the protocol
// where it applies, and nvls_tree, which only the simulator times (the emulator runs its
// schedule, hierarchical). The emulator's default choice, the replay, `twinccl perf` (predicted
// and measured) and run() all ask it; nothing else chooses.
//
//   auto t = std::make_shared<const topo::Topology>(topo::load_topology("dgx-h100"));
//   sim::SelectionPolicy policy(t);                  // the loaded (and edited) topology object
//   sim::Decision d = policy.resolve(call, {0, 1, 2, 3, 4, 5, 6, 7});
//   // d.algorithm "nvls" (the label a table shows), d.schedule what the emulator runs for it
//
// Built once per run; its Tuners are built once per communicator (its ranks), as NCCL tunes once
// per communicator, and kept; resolve() is safe from many rank threads at once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/sim/tuner.h"

namespace twinccl::sim {

// Where a forced algorithm or protocol applies: to every call (an error where it cannot run: the
// emulator's TWINCCL_ALGO, perf's --algo), or only to the calls it exists for, the others keeping
// the tuner's choice (a replay forcing one name over a trace of many collectives).
enum class ForcedScope { every_call, where_it_applies };

struct Forced {
  std::string algorithm;             // "" = none
  std::optional<Protocol> protocol;  // unset = none
  ForcedScope scope = ForcedScope::every_call;
  // The call's own name (as a trace recorded it): used where `algorithm` is empty or does not
  // exist for the collective; "" = the tuner's choice.
  std::string recorded;
};

struct Decision {
  std::string algorithm;             // what a table labels the call: a registry name or nvls_tree
  std::string schedule;              // the registry schedule that runs it (emulator) or plays it
  std::optional<Protocol> protocol;  // the tuner's (unset where no tuner chose: no topology)
  int channels = 0;                  // the tuner's (0 where no tuner chose)
  bool tuned = false;                // a topology's Tuner chose or checked it
};

struct PolicyOptions {
  int ranks_per_node = 0;  // 0 = as the ranks fall on the topology's nodes (Tuner's)
  bool software_latency = true;
  int nccl_version = 0;  // NCCL_VERSION_CODE whose model ranks; 0 = the newest
};

class SelectionPolicy {
 public:
  // topology: the loaded and edited topology the calls run on; nullptr = none (the registry's
  // default: ring where it exists, else direct).
  explicit SelectionPolicy(std::shared_ptr<const topo::Topology> topology = nullptr,
                           PolicyOptions options = {});

  // The decision for one call of the communicator whose rank r sits on the topology's GPU
  // ranks[r]. spec.nranks is set from ranks. Throws InvalidArgument when a forced algorithm or
  // protocol does not exist or (ForcedScope::every_call) does not apply, naming what applies.
  Decision resolve(CollectiveSpec spec, DataType dtype, const std::vector<int>& ranks,
                   const Forced& forced = {}) const;
  // The same for an operation as a communicator issues it (its spec_of, schedule.h, and dtype).
  Decision resolve(const OpDesc& op, const std::vector<int>& ranks,
                   const Forced& forced = {}) const;

  // The Tuner of the communicator on these GPUs, built at the first ask and kept.
  const Tuner& tuner(const std::vector<int>& ranks) const;
  // GPUs 0..nranks-1 (nranks 0: every GPU of the topology).
  const Tuner& tuner(int nranks = 0) const;
  const topo::Topology* topology() const { return topology_.get(); }
  const PolicyOptions& options() const { return options_; }

 private:
  bool tunable(const CollectiveSpec& spec, const std::vector<int>& ranks) const;

  std::shared_ptr<const topo::Topology> topology_;
  PolicyOptions options_;
  mutable std::mutex mu_;
  mutable std::map<std::vector<int>, std::unique_ptr<Tuner>> tuners_;
};

// Every name a forced algorithm may take: the registry's, and nvls_tree where the simulator
// times the call (simulator true).
std::vector<std::string> selectable_algorithms(bool simulator);
// Whether `algorithm` (a registry schedule) folds a reduction in the ring's order, the reference
// model's and the emulator's fast path's, so its results equal them bit for bit (ring, direct,
// nvls); false for the others (tree, hierarchical, halving_doubling, pat) and unknown names.
bool folds_in_ring_order(std::string_view algorithm);
// NCCL's NCCL_ALGO spelling of one of its algorithms ("Ring", "NVLSTree"); "" for a what-if one.
std::string_view nccl_algorithm_name(std::string_view algorithm);

}  // namespace twinccl::sim
