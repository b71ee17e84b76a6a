// The sequential reference model: what every rank's output must be, computed in one thread
// from every rank's input with the documented ring fold order. The conformance suite and
// `twinccl perf`'s #wrong column compare the emulator's bytes with it bit for bit.
//
//   Bytes want = reference_output(call, inputs, rank);
#pragma once

#include <cstddef>
#include <vector>

#include "twinccl/operation.h"

namespace twinccl {

using Bytes = std::vector<unsigned char>;

// `call` as rank `rank` passes it (counts, root, dtype; pointers ignored); `inputs[r]` is rank
// r's send buffer contents; `ops[r]` its reduce op. `before` is this rank's recv buffer before the
// call (parts the collective does not write stay as they were). Returns this rank's recv buffer.
Bytes reference_output(const OpDesc& call, const std::vector<Bytes>& inputs,
                       const std::vector<ReduceOp>& ops, int rank, const Bytes& before);

// A deterministic test value for element i of rank r, suited to dtype and op (small, non-trivial
// fractions for floats; values near 1 for prod).
double test_value(DataType dtype, ReduceKind op, int rank, std::size_t i, unsigned salt);

// Fills `count` elements of dtype with test_value().
Bytes make_input(DataType dtype, ReduceKind op, int rank, std::size_t count, unsigned salt);

}  // namespace twinccl
