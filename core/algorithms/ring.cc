// "ring": NCCL's ring for every collective it serves; the schedules are in *_ring.cc.
#include "algorithms/ring.h"

#include "algorithms/algorithm_list.h"

namespace twinccl::algo {
const Algorithm& ring_algorithm() {
  static const ListedAlgorithm algorithm(
      "ring",
      "ring r -> r+1: reduce-scatter and/or all-gather in n-1 steps each, chains for "
      "broadcast/reduce; folds chunk c as x[c+1], ..., x[c]",
      {{OpKind::all_reduce, all_reduce_ring},
       {OpKind::reduce_scatter, reduce_scatter_ring},
       {OpKind::all_gather, all_gather_ring},
       {OpKind::broadcast, broadcast_ring},
       {OpKind::reduce, reduce_ring},
       {OpKind::all_gather_v, all_gather_ring},
       {OpKind::reduce_scatter_v, reduce_scatter_ring}});
  return algorithm;
}

}  // namespace twinccl::algo
