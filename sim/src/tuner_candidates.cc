// Which algorithms exist for a call and why each does not apply (Tuner::candidates, tuner.h):
// split from tuner.cc, which times and ranks them.
//
// How it works. The registry's algorithms for the collective, each with its schedule's own
// reason; NVLS needs an NVLS-capable node, runs inside one node and, for reduce_scatter and
// all_gather, on at most NCCL_MAX_NVLS_ARITY GPUs; then the simulator-only rows (nvls_tree:
// NCCL's multi-node NVLS, all_reduce across whole nodes of as many ranks each). An empty reason
// means the algorithm applies.
#include <string>
#include <utility>
#include <vector>

#include "model.h"
#include "tuner_internal.h"
#include "twinccl/sim/tuner.h"

namespace twinccl::sim {

std::vector<std::pair<std::string, std::string>> Tuner::candidates(
    const CollectiveSpec& call) const {
  const CollectiveSpec spec = settled(call);
  const detail::TopologyView& view = *view_;
  const std::string& topo_name = topology_.name();
  const std::string n = std::to_string(spec.nranks);
  const std::string not_nvls =
      "needs an NVLS-capable topology (NVSwitch with NVLink SHARP); '" + topo_name + "' is not";
  std::vector<std::pair<std::string, std::string>> out;
  for (const Algorithm* a : algorithms_for(spec.kind)) {
    std::string why = a->why_not(spec, schedule_params());
    const detail::AlgorithmTraits* t = detail::find_traits(a->name());
    if (why.empty() && t != nullptr && t->needs_nvls_switch) {
      if (!view.nvls_capable) {
        why = not_nvls;
      } else if (view.nodes > 1) {
        why = "NCCL runs NVLS inside one node only; the " + n + " ranks span " +
              std::to_string(view.nodes) + " nodes of '" + topo_name +
              "' (NCCL's multi-node form is nvls_tree" +
              (spec.kind == OpKind::all_reduce ? ")" : ", for all_reduce only)");
      } else if (spec.kind != OpKind::all_reduce &&
                 view.ranks_per_node > detail::kNccl.nvls_max_heads) {
        // enqueue.cc: NVLS reduce_scatter/all_gather need a head per GPU (NCCL_MAX_NVLS_ARITY).
        why = "NCCL runs NVLS " + std::string(twinccl::name(spec.kind)) + " on at most " +
              std::to_string(static_cast<int>(detail::kNccl.nvls_max_heads)) +
              " GPUs of one NVLink domain (NCCL_MAX_NVLS_ARITY); the " + n + " ranks of '" +
              topo_name + "' are " + std::to_string(view.ranks_per_node) + " in one";
      }
    }
    out.emplace_back(std::string(a->name()), std::move(why));
  }
  // The simulator-only rows (nvls_tree: NCCL's multi-node NVLS, all_reduce across whole nodes).
  for (const detail::AlgorithmTraits& t : detail::all_traits()) {
    if (!t.simulator_only || t.rccl_msccl || !t.nccl_serves(spec.kind)) continue;
    std::string why;
    if (t.needs_nvls_switch && !view.nvls_capable) {
      why = not_nvls;
    } else if (view.nodes < 2) {
      why = "NVLS-tree spans nodes; the " + n + " ranks sit in one node of '" + topo_name +
            "' (use nvls)";
    } else if (ranks_per_node_ == 0 || spec.nranks % ranks_per_node_ != 0) {
      why = "needs whole nodes with as many ranks each: the " + n + " ranks do not fill the " +
            std::to_string(view.nodes) + " nodes of '" + topo_name + "' they span equally";
    }
    out.emplace_back(std::string(t.name), std::move(why));
  }
  return out;
}

}  // namespace twinccl::sim
