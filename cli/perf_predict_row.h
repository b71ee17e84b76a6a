// One row of `twinccl perf --backend sim`: the simulator's request for it, its prediction and
// whether the emulator checks it (--check). perf_predict.cc builds the table from these.
//
//   const sim::Prediction p = predict_row(options, OpKind::all_reduce, DataType::f32, count);
//   if (options.check && checkable(options, OpKind::all_reduce, count, DataType::f32, nranks)) ...
#pragma once

#include <cstddef>

#include "perf_options.h"
#include "twinccl/data_type.h"
#include "twinccl/operation.h"
#include "twinccl/reduce_op.h"
#include "twinccl/sim/timing.h"

namespace twinccl::cli {

// The request a row predicts: --algo / --proto (a forced name, or NCCL's lists restricting the
// choice), --fidelity, nccl-tests' host launch (-g / -t) and --nccl-version. `op` and `in_place`
// change only a one-rank call (sim::Prediction::one_rank).
sim::Request make_request(const PerfOptions& o, OpKind kind, DataType dtype, std::size_t count,
                          ReduceKind op = ReduceKind::sum, bool in_place = false);

// One row's prediction: the tuner's choice for a collective; for sendrecv/hypercube the rounds of
// send/recv priced on the tuner's communicator (sim/p2p.h), shown as p2p/Simple.
sim::Prediction predict_row(const PerfOptions& o, OpKind kind, DataType dtype, std::size_t count,
                            ReduceKind op = ReduceKind::sum, bool in_place = false);

// The emulator checks a size when every rank's send and recv buffers together fit the budget
// (--check-max, at most 64 ranks); throws when the emulator could not hold them.
bool checkable(const PerfOptions& o, OpKind kind, std::size_t count, DataType dtype, int nranks);

}  // namespace twinccl::cli
