// "direct": every rank exchanges with every rank it needs in one step (NCCL runs all_to_all,
// gather and scatter as grouped send/recv the same way); reducing variants then fold locally in
// ring order. The per-collective schedules are in *_direct.cc.
#include "algorithms/direct.h"

#include "algorithms/algorithm_list.h"

namespace twinccl::algo {
// A barrier has no schedule: the emulator synchronises it by itself.
const Algorithm& direct_algorithm() {
  static const ListedAlgorithm algorithm(
      "direct",
      "every rank sends each peer its block in one step (grouped send/recv); reductions fold "
      "received blocks locally in ring order",
      {{OpKind::all_to_all, all_to_all_direct},
       {OpKind::gather, gather_direct},
       {OpKind::scatter, scatter_direct},
       {OpKind::all_to_all_v, all_to_all_direct},
       {OpKind::gather_v, gather_direct},
       {OpKind::scatter_v, scatter_direct},
       {OpKind::all_gather_v, all_gather_direct},
       {OpKind::reduce_scatter_v, reduce_scatter_direct},
       {OpKind::broadcast, broadcast_direct},
       {OpKind::all_gather, all_gather_direct},
       {OpKind::reduce_scatter, reduce_scatter_direct},
       {OpKind::reduce, reduce_direct},
       {OpKind::barrier, nullptr}});
  return algorithm;
}

}  // namespace twinccl::algo
