// Test helpers for the algorithms area: build a schedule, check it, run it through the
// interpreter on deterministic inputs, and compute the expected outputs directly.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "twinccl/algorithms.h"
#include "twinccl/data_type.h"
#include "twinccl/reduce_op.h"
#include "twinccl/schedule.h"

namespace algo_test {

using Bytes = std::vector<std::byte>;

// How inputs are filled: small integers (every fold order gives the same result) or fractions
// (the result depends on the fold order: compared bitwise against the ring order).
enum class Values { small_integers, fractions };

struct Setup {
  twinccl::CollectiveSpec spec;
  std::string algorithm;
  twinccl::AlgorithmParams params;
  twinccl::DataType dtype = twinccl::DataType::int32;
  std::vector<twinccl::ReduceOp> ops;  // per rank; empty = sum everywhere
  bool in_place = false;
  Values values = Values::small_integers;
};

// A spec with per-rank counts that vary (some zero) for the _v variants.
twinccl::CollectiveSpec make_spec(twinccl::OpKind kind, int nranks, std::size_t count,
                                  int root = 0);

// Inputs of every rank, filled deterministically.
std::vector<Bytes> make_inputs(const Setup& setup);

// Builds the schedule, runs check_schedule and interpret_schedule; returns every rank's output.
std::vector<Bytes> run_algorithm(const Setup& setup, const std::vector<Bytes>& inputs);

// The expected outputs: reductions folded in the ring order (chunk c: x[c+1], ..., x[c]) with
// the same Reduction the interpreter uses; data movement computed element by element.
std::vector<Bytes> expected_outputs(const Setup& setup, const std::vector<Bytes>& inputs);

// "ring all_reduce n=4 count=17 channels=3 chunk=7 in place" for INFO messages.
std::string describe(const Setup& setup);

// Does the algorithm fold in the ring order (so fractions compare bitwise)?
bool folds_in_ring_order(const std::string& algorithm);

}  // namespace algo_test
