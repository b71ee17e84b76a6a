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

// Inputs whose reduction is the same in every fold order, for a backend whose order is not the
// reference's (NCCL's ring, tree or NVLS): small integers for sum, avg and premul_sum (their
// partial sums stay exact while n x 3 fits the type's significand: float32 any n, float16 up to
// 682 ranks, bfloat16 85, float8 4-5), powers of two near 1 for prod; integer types as
// make_input. Bit-exact comparison then holds for any correct implementation, except avg on
// floating types over a rank count that is not a power of two (NCCL scales each input by 1/n
// first: see results_agree).
Bytes make_order_free_input(DataType dtype, ReduceKind op, int rank, std::size_t count,
                            unsigned salt);
// premul_sum's scalar for rank r with order-free inputs of a floating `dtype`: 1, 1/2 or 1/4
// (exact products and sums); 1 for float8, whose 3-4 significant bits hold only the integer sums.
double order_free_premul_scalar(DataType dtype, int rank);
// Element i of `got` and `want` agree: bit for bit, or, for avg on a floating type over `nranks`
// that is not a power of two, within (nranks + 2) units in the last place of the type times
// max(|want|, 3) (order-free inputs; the two ways of averaging round differently).
bool results_agree(DataType dtype, ReduceKind op, int nranks, const unsigned char* got,
                   const unsigned char* want, std::size_t i);

}  // namespace twinccl
