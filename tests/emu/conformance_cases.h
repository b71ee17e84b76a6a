// The conformance sweep's cases: one collective call with its inputs and expected outputs for
// every rank, computed by the sequential reference model before the emulated run.
#pragma once

#include <string>
#include <vector>

#include "twinccl/communicator.h"
#include "twinccl/reference.h"

namespace twinccl::testing {

struct Case {
  OpKind kind;
  DataType dtype;
  ReduceKind op;
  std::size_t count;
  int root;
  bool in_place;
  unsigned salt;
  std::vector<Bytes> inputs;    // per rank
  std::vector<ReduceOp> ops;    // per rank
  std::vector<Bytes> expected;  // per rank: the compared region of its output
  std::string describe() const;
};

// Builds the case (inputs, expected) for nranks.
Case make_case(OpKind kind, DataType dtype, ReduceKind op, std::size_t count, int root,
               bool in_place, int nranks, unsigned salt);

// Runs the case as `comm`'s rank and throws std::runtime_error naming the first wrong element.
void run_case(Communicator& comm, const Case& c, std::string_view algorithm = {});

// Every collective x dtype x op x count x in-place combination the sweep covers for nranks.
std::vector<Case> sweep_cases(int nranks, DataType dtype);

}  // namespace twinccl::testing
