// Private: every algorithm object, one accessor per algorithm file. The registry
// (core/src/algorithm_registry.cc) lists them in this order.
#pragma once

#include "twinccl/algorithms.h"

namespace twinccl::algo {

const Algorithm& ring_algorithm();
const Algorithm& direct_algorithm();
const Algorithm& tree_algorithm();
const Algorithm& halving_doubling_algorithm();
const Algorithm& bruck_algorithm();
const Algorithm& pat_algorithm();
const Algorithm& nvls_algorithm();
const Algorithm& hierarchical_algorithm();

}  // namespace twinccl::algo
