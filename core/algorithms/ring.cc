// "ring": NCCL's ring for every collective it serves; the schedules are in *_ring.cc.
#include "algorithms/ring.h"

#include "algorithms/algorithm_list.h"

namespace twinccl::algo {
namespace {

class RingAlgorithm final : public Algorithm {
 public:
  std::string_view name() const override { return "ring"; }
  std::string_view description() const override {
    return "ring r -> r+1: reduce-scatter and/or all-gather in n-1 steps each, chains for "
           "broadcast/reduce; folds chunk c as x[c+1], ..., x[c]";
  }
  std::vector<OpKind> collectives() const override {
    return {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather,      OpKind::broadcast,
            OpKind::reduce,     OpKind::all_gather_v,   OpKind::reduce_scatter_v};
  }
  RankSchedule generate(const CollectiveSpec& spec, const AlgorithmParams& params,
                        int rank) const override {
    switch (spec.kind) {
      case OpKind::all_reduce:
        return all_reduce_ring(spec, params, rank);
      case OpKind::reduce_scatter:
      case OpKind::reduce_scatter_v:
        return reduce_scatter_ring(spec, params, rank);
      case OpKind::all_gather:
      case OpKind::all_gather_v:
        return all_gather_ring(spec, params, rank);
      case OpKind::broadcast:
        return broadcast_ring(spec, params, rank);
      default:
        return reduce_ring(spec, params, rank);
    }
  }
};

}  // namespace

const Algorithm& ring_algorithm() {
  static const RingAlgorithm algorithm;
  return algorithm;
}

}  // namespace twinccl::algo
