// `twinccl perf --compare`: one line per size, every applicable (algorithm, protocol) with its
// predicted time as the call runs, fastest first, the tuner's (NCCL's) choice marked `*`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "twinccl/sim/timing.h"

namespace twinccl::cli {

// The legend printed under the table's title: what `*` is and why it need not be first.
std::string compare_legend();

// One size: `rows` as sim::compare_all returns them (fastest first, the tuner's choice marked),
// already narrowed to what --algo/--proto allow. When one of NCCL's algorithms runs faster than
// the choice, a second line says what NCCL ranked them by and how to force the faster one.
std::string compare_size_line(std::size_t bytes, const std::vector<sim::Prediction>& rows);

}  // namespace twinccl::cli
