// Internal: what the simulator and the selection policy know about each algorithm, as data (one
// row per name, the way UCC keeps its scores), so no other code compares algorithm names.
//
//   const AlgorithmTraits& t = traits_of("nvls_tree");   // t.schedule "hierarchical"
//   if (auto algo = nccl_algo_for("ring", OpKind::all_reduce)) ...  // NcclAlgo::ring
//
// The registry (core/algorithms) owns the schedules; these rows add what NCCL calls them, which
// protocols NCCL models them with, how the flow model plays them, and nvls_tree, NCCL's
// multi-node NVLS, which only the simulator times (flow plays hierarchical in its place).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nccl_tuning_table.h"
#include "twinccl/operation.h"

namespace twinccl::sim::detail {

// The name RCCL's MSCCL all-pairs all_reduce is reported by (analytic_rccl.cc).
inline constexpr std::string_view kMscclAllpairs = "msccl_allpairs";

struct AlgorithmTraits {
  std::string_view name;       // "ring": the registry's name (or nvls_tree)
  std::string_view nccl_name;  // NCCL_ALGO's spelling ("Ring"); "" = a what-if algorithm
  std::optional<NcclAlgo> nccl;
  bool (*nccl_serves)(OpKind) = nullptr;  // the collectives NCCL's model covers it for
  bool ll_protocols = false;              // LL/LL128/Simple where NCCL models it, else Simple
  // NCCL chooses it unforced only with one GPU per node (PAT, enqueue.cc).
  bool nccl_one_gpu_per_node = false;
  bool needs_nvls_switch = false;  // an NVSwitch with NVLink SHARP
  bool simulator_only = false;     // no registry schedule of its own (nvls_tree)
  bool rccl_msccl = false;         // RCCL's MSCCL all-pairs: chosen by RCCL's rule, never ranked
  std::string_view schedule;       // the registry schedule the emulator runs and flow plays
  // Flow: step k+1 forwards what step k received, one grouped send/recv per step (bruck,
  // halving_doubling), as any implementation over point-to-point calls.
  bool grouped_steps = false;
  bool ring_rounds = false;        // a ring whose symmetric rounds flow may compress (bulk/rounds)
  bool pipelined_tree = false;     // a tree played pipelined in Simple's steps when NCCL has none
  bool one_step_exchange = false;  // every rank with every rank in one step (direct)
  bool every_pair = false;  // n (n - 1) transfers per channel (direct, pat): the replay's cap
  // Reductions fold in the ring's order (ring_fold_rank), the reference's and the emulator's fast
  // path's: results equal theirs bit for bit (ring, direct, nvls).
  bool ring_fold_order = false;
};

// Every row, registry order then nvls_tree.
const std::vector<AlgorithmTraits>& all_traits();
// The row of `name`, or nullptr.
const AlgorithmTraits* find_traits(std::string_view name);
// The row of `name`; InvalidArgument naming the known ones when there is none.
const AlgorithmTraits& traits_of(std::string_view name);
// "ring, direct, ..., nvls_tree": every name, for messages.
std::string known_algorithms();

// The registry schedule that plays `algorithm`: itself, hierarchical for nvls_tree; an unknown
// name is returned as is (the registry then names what exists).
std::string_view schedule_algorithm(std::string_view algorithm);
// Whether flow plays `algorithm` as one grouped send/recv per step (never one NCCL models).
bool grouped_steps(std::string_view algorithm, bool nccl);

// NCCL's model of `algorithm` for this collective (ring, tree, nvls, nvls_tree, pat), or none.
std::optional<NcclAlgo> nccl_algo_for(std::string_view algorithm, OpKind kind);

}  // namespace twinccl::sim::detail
