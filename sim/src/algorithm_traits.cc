// The algorithms' traits (algorithm_traits.h): one row each, NCCL's facts from
// shared/reference/nccl-facts.md (which algorithm serves which collective, LL/LL128 only with ring
// and tree, PAT with one GPU per node, NVLS needs NVLink SHARP).
#include "algorithm_traits.h"

#include "twinccl/errors.h"

namespace twinccl::sim::detail {
namespace {

bool rs_ag(OpKind k) { return k == OpKind::reduce_scatter || k == OpKind::all_gather; }
bool ring_serves(OpKind k) {
  return k == OpKind::all_reduce || rs_ag(k) || k == OpKind::broadcast || k == OpKind::reduce;
}
bool all_reduce_only(OpKind k) { return k == OpKind::all_reduce; }
bool nvls_serves(OpKind k) { return k == OpKind::all_reduce || rs_ag(k); }

AlgorithmTraits row(std::string_view name, std::string_view nccl_name = {},
                    std::optional<NcclAlgo> nccl = std::nullopt, bool (*serves)(OpKind) = nullptr) {
  AlgorithmTraits t;
  t.name = name;
  t.nccl_name = nccl_name;
  t.nccl = nccl;
  t.nccl_serves = serves;
  t.schedule = name;
  return t;
}

std::vector<AlgorithmTraits> make_rows() {
  std::vector<AlgorithmTraits> rows;
  AlgorithmTraits& ring = rows.emplace_back(row("ring", "Ring", NcclAlgo::ring, ring_serves));
  ring.ll_protocols = true;
  ring.ring_rounds = true;
  ring.ring_fold_order = true;
  AlgorithmTraits& direct = rows.emplace_back(row("direct"));
  direct.one_step_exchange = true;
  direct.every_pair = true;
  direct.ring_fold_order = true;
  AlgorithmTraits& tree = rows.emplace_back(row("tree", "Tree", NcclAlgo::tree, all_reduce_only));
  tree.ll_protocols = true;
  tree.pipelined_tree = true;
  rows.emplace_back(row("halving_doubling")).grouped_steps = true;
  rows.emplace_back(row("bruck")).grouped_steps = true;
  AlgorithmTraits& pat = rows.emplace_back(row("pat", "PAT", NcclAlgo::pat, rs_ag));
  pat.nccl_one_gpu_per_node = true;
  pat.every_pair = true;
  AlgorithmTraits& nvls = rows.emplace_back(row("nvls", "NVLS", NcclAlgo::nvls, nvls_serves));
  nvls.needs_nvls_switch = true;
  nvls.ring_fold_order = true;  // nvls.cc: chunk c folds x[c+1], x[c+2], ..., x[c]
  rows.emplace_back(row("hierarchical"));
  AlgorithmTraits& nvls_tree =
      rows.emplace_back(row("nvls_tree", "NVLSTree", NcclAlgo::nvls_tree, all_reduce_only));
  nvls_tree.needs_nvls_switch = true;
  nvls_tree.simulator_only = true;
  nvls_tree.schedule = "hierarchical";  // flow and the emulator play it in NVLS-tree's place
  // RCCL's MSCCL all-pairs all_reduce (analytic_rccl.cc): never ranked, chosen by RCCL's rule.
  AlgorithmTraits& msccl =
      rows.emplace_back(row(kMscclAllpairs, "MSCCL", std::nullopt, all_reduce_only));
  msccl.ll_protocols = true;
  msccl.simulator_only = true;
  msccl.rccl_msccl = true;
  msccl.ring_fold_order = true;
  // The registry has no all-pairs all_reduce: flow and the emulator play the ring in its place.
  msccl.schedule = "ring";
  return rows;
}

}  // namespace

const std::vector<AlgorithmTraits>& all_traits() {
  static const std::vector<AlgorithmTraits> rows = make_rows();
  return rows;
}

const AlgorithmTraits* find_traits(std::string_view name) {
  for (const AlgorithmTraits& t : all_traits()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string known_algorithms() {
  std::string list;
  for (const AlgorithmTraits& t : all_traits())
    list += (list.empty() ? "" : ", ") + std::string(t.name);
  return list;
}

const AlgorithmTraits& traits_of(std::string_view name) {
  if (const AlgorithmTraits* t = find_traits(name)) return *t;
  throw InvalidArgument("unknown algorithm '" + std::string(name.substr(0, 64)) +
                        "'; known: " + known_algorithms());
}

std::string_view schedule_algorithm(std::string_view algorithm) {
  const AlgorithmTraits* t = find_traits(algorithm);
  return t != nullptr ? t->schedule : algorithm;
}

bool grouped_steps(std::string_view algorithm, bool nccl) {
  const AlgorithmTraits* t = find_traits(algorithm);
  return !nccl && t != nullptr && t->grouped_steps;
}

std::optional<NcclAlgo> nccl_algo_for(std::string_view algorithm, OpKind kind) {
  const AlgorithmTraits* t = find_traits(algorithm);
  if (t == nullptr || !t->nccl || !t->nccl_serves(kind)) return std::nullopt;
  return t->nccl;
}

}  // namespace twinccl::sim::detail
