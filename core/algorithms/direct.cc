// "direct": every rank exchanges with every rank it needs in one step (NCCL runs all_to_all,
// gather and scatter as grouped send/recv the same way); reducing variants then fold locally in
// ring order. The per-collective schedules are in *_direct.cc.
#include "algorithms/direct.h"

#include "algorithms/algorithm_list.h"

namespace twinccl::algo {
namespace {

class DirectAlgorithm final : public Algorithm {
 public:
  std::string_view name() const override { return "direct"; }
  std::string_view description() const override {
    return "every rank sends each peer its block in one step (grouped send/recv); reductions "
           "fold received blocks locally in ring order";
  }
  std::vector<OpKind> collectives() const override {
    return {OpKind::all_to_all,   OpKind::gather,           OpKind::scatter,
            OpKind::all_to_all_v, OpKind::gather_v,         OpKind::scatter_v,
            OpKind::all_gather_v, OpKind::reduce_scatter_v, OpKind::broadcast,
            OpKind::all_gather,   OpKind::reduce_scatter,   OpKind::reduce,
            OpKind::barrier};
  }
  RankSchedule generate(const CollectiveSpec& spec, const AlgorithmParams& params,
                        int rank) const override {
    switch (spec.kind) {
      case OpKind::all_to_all:
      case OpKind::all_to_all_v:
        return all_to_all_direct(spec, params, rank);
      case OpKind::gather:
      case OpKind::gather_v:
        return gather_direct(spec, params, rank);
      case OpKind::scatter:
      case OpKind::scatter_v:
        return scatter_direct(spec, params, rank);
      case OpKind::broadcast:
        return broadcast_direct(spec, params, rank);
      case OpKind::all_gather:
      case OpKind::all_gather_v:
        return all_gather_direct(spec, params, rank);
      case OpKind::reduce_scatter:
      case OpKind::reduce_scatter_v:
        return reduce_scatter_direct(spec, params, rank);
      case OpKind::reduce:
        return reduce_direct(spec, params, rank);
      default:
        return {};  // barrier: the emulator synchronises without a schedule
    }
  }
};

}  // namespace

const Algorithm& direct_algorithm() {
  static const DirectAlgorithm algorithm;
  return algorithm;
}

}  // namespace twinccl::algo
