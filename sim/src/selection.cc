// The one selection policy (selection.h).
//
// How it works. A call is tuned when there is a topology, the call is a collective with its whole
// shape known (an uneven one needs every rank's counts: a trace has them, one emulated rank does
// not) and every rank sits on a GPU of the topology; then the communicator's Tuner (built once)
// chooses or checks a forced name. Otherwise the registry's default runs (ring where it exists,
// else direct) unless a name is forced. A forced name is checked against the traits table
// (algorithm_traits.h): it must exist; where it does not exist for the collective it is an error
// for ForcedScope::every_call and ignored for where_it_applies (the call's own recorded name, then
// the tuner, decide). A forced protocol narrows the tuner's choice; where_it_applies keeps the
// tuner's when no applicable algorithm runs it. The schedule of a decision is the traits'
// (nvls_tree plays hierarchical). Example, 16 GPUs of dgx-h100 --set nodes=2, 64 MiB all_reduce:
// tuned, nvls_tree/Simple, schedule hierarchical.
#include "twinccl/sim/selection.h"

#include <algorithm>

#include "algorithm_traits.h"
#include "tuner_internal.h"
#include "twinccl/algorithm_defaults.h"
#include "twinccl/errors.h"
#include "twinccl/op_traits.h"

namespace twinccl::sim {
namespace {

// Whether `name` exists for the collective: a registry algorithm serving it, or a simulator-only
// row whose NCCL model covers it.
bool exists_for(std::string_view name, OpKind kind) {
  const detail::AlgorithmTraits* t = detail::find_traits(name);
  if (t != nullptr && t->simulator_only) return t->nccl_serves(kind);
  return serves_algorithm(kind, name);
}

Decision untuned(std::string_view algorithm) {
  Decision d;
  d.algorithm = std::string(algorithm);
  d.schedule = std::string(detail::schedule_algorithm(algorithm));
  return d;
}

}  // namespace

SelectionPolicy::SelectionPolicy(std::shared_ptr<const topo::Topology> topology,
                                 PolicyOptions options)
    : topology_(std::move(topology)), options_(options) {}

const Tuner& SelectionPolicy::tuner(const std::vector<int>& ranks) const {
  if (topology_ == nullptr) throw InvalidArgument("selection: no topology to tune on");
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = tuners_[ranks];
  if (!slot) {
    slot = std::make_unique<Tuner>(*topology_, ranks, options_.ranks_per_node,
                                   options_.software_latency, options_.nccl_version);
  }
  return *slot;
}

const Tuner& SelectionPolicy::tuner(int nranks) const {
  if (topology_ == nullptr) throw InvalidArgument("selection: no topology to tune on");
  const int n = nranks == 0 ? topology_->gpu_count() : nranks;
  if (n < 1 || n > topology_->gpu_count()) {
    throw InvalidArgument("selection: nranks=" + std::to_string(nranks) + " is outside 1.." +
                          std::to_string(topology_->gpu_count()) + " (topology '" +
                          topology_->name() + "')");
  }
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) ranks[static_cast<std::size_t>(r)] = r;
  return tuner(ranks);
}

bool SelectionPolicy::tunable(const CollectiveSpec& spec, const std::vector<int>& ranks) const {
  if (topology_ == nullptr || ranks.empty()) return false;
  if (spec.kind == OpKind::barrier || is_p2p(spec.kind)) return false;
  if (is_uneven(spec.kind) && spec.counts.empty() && spec.matrix.empty()) return false;
  const int gpus = topology_->gpu_count();
  return std::all_of(ranks.begin(), ranks.end(), [&](int r) { return r >= 0 && r < gpus; });
}

Decision SelectionPolicy::resolve(CollectiveSpec spec, DataType dtype,
                                  const std::vector<int>& ranks, const Forced& forced) const {
  spec.nranks = static_cast<int>(ranks.size());
  std::string algorithm = forced.algorithm;
  if (!algorithm.empty()) {
    (void)detail::traits_of(algorithm);  // unknown anywhere: an error in every scope
    if (!exists_for(algorithm, spec.kind)) {
      if (forced.scope == ForcedScope::every_call) {
        if (detail::traits_of(algorithm).simulator_only) {
          throw InvalidArgument("algorithm '" + algorithm + "' does not exist for " +
                                std::string(name(spec.kind)) + " (all_reduce only)");
        }
        (void)find_algorithm(spec.kind, algorithm);  // throws the registry's message
      }
      algorithm.clear();
    }
  }
  if (algorithm.empty()) algorithm = forced.recorded;
  if (!tunable(spec, ranks)) {
    if (!algorithm.empty()) return untuned(algorithm);
    return untuned(default_algorithm(spec.kind));
  }
  TunerCall call;
  call.spec = spec;
  call.dtype = dtype;
  call.algorithm = algorithm;
  const Tuner& t = tuner(ranks);
  Choice choice;
  if (forced.protocol && forced.scope == ForcedScope::where_it_applies) {
    choice = t.choose(call);
    const std::vector<Protocol> ps = detail::protocols_applicable(choice.algorithm, spec.kind);
    const bool runs_it = std::find(ps.begin(), ps.end(), *forced.protocol) != ps.end();
    if (choice.protocol != *forced.protocol && (runs_it || call.algorithm.empty())) {
      call.protocol = forced.protocol;
      try {
        choice = t.choose(call);
      } catch (const InvalidArgument&) {  // no applicable algorithm runs it: the tuner's stands
      }
    }
  } else {
    call.protocol = forced.protocol;
    choice = t.choose(call);
  }
  Decision d = untuned(choice.algorithm);
  d.protocol = choice.protocol;
  d.channels = choice.channels;
  d.tuned = true;
  return d;
}

Decision SelectionPolicy::resolve(const OpDesc& op, const std::vector<int>& ranks,
                                  const Forced& forced) const {
  return resolve(spec_of(op, static_cast<int>(ranks.size())), op.dtype, ranks, forced);
}

std::vector<std::string> selectable_algorithms(bool simulator) {
  std::vector<std::string> names = algorithm_names();
  if (simulator) {
    for (const detail::AlgorithmTraits& t : detail::all_traits()) {
      if (t.simulator_only) names.emplace_back(t.name);
    }
  }
  return names;
}

bool folds_in_ring_order(std::string_view algorithm) {
  const detail::AlgorithmTraits* t = detail::find_traits(algorithm);
  return t != nullptr && t->ring_fold_order;
}

std::string_view nccl_algorithm_name(std::string_view algorithm) {
  const detail::AlgorithmTraits* t = detail::find_traits(algorithm);
  return t != nullptr ? t->nccl_name : std::string_view();
}

}  // namespace twinccl::sim
