// A plain, single-threaded executor of schedules on host memory: the oracle the tests compare
// the emulator and every algorithm against, and what `twinccl perf --check` can use.
//
//   std::vector<RankBuffers> buffers = {{in0, out0}, {in1, out1}};
//   Reduction r = Reduction::make(DataType::float32, ops);   // per-rank ops (reduction.h)
//   interpret_schedule(build_schedule(spec, "ring", {}), DataType::float32, &r, buffers);
//
// Ranks run one after another in one thread. A send copies its data when posted; a rank moves
// on from a step once every recv of that step has its message. Inside one step sends go first,
// then the other operations in order. Reading `input` in a reducing collective goes through
// Reduction::load; recv_reduce computes dst = combine(peer's data, local src) (peer first: the
// documented fold order acc = acc op x_next); `finalize` ops apply Reduction::finalize to dst.
// Input and output may be the same memory (in-place calls), sources are read before dst is
// written. Each rank gets schedule.ranks[r].scratch_count elements of scratch.
// Throws InvalidArgument for missing buffers or reduction, InternalError when the schedule
// stalls (naming the stuck ranks and the peers they wait for) or leaves messages unreceived.
#pragma once

#include <span>

#include "twinccl/data_type.h"
#include "twinccl/reduction.h"
#include "twinccl/schedule.h"

namespace twinccl {

struct RankBuffers {
  const void* input = nullptr;  // input_elements(spec, rank) elements
  void* output = nullptr;       // output_elements(spec, rank) elements
};

void interpret_schedule(const Schedule& schedule, DataType dtype, const Reduction* reduction,
                        std::span<const RankBuffers> buffers);

}  // namespace twinccl
