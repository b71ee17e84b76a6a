// The request nccl-tests makes of the model for one all_reduce row, for the fidelity tests:
//
//   const Prediction p = predict(topo::load_topology("aws-p5-4"), all_reduce_request(256u << 20));
//
// float32 sum of `bytes` per rank, one GPU per process (-g 1: the per-call host launch nccl-tests
// measures), NCCL's choice unless `protocol` / `algorithm` force one.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "twinccl/sim/timing.h"

namespace twinccl::fidelity {

inline sim::Request all_reduce_request(std::size_t bytes,
                                       std::optional<sim::Protocol> protocol = std::nullopt,
                                       std::string algorithm = {}) {
  sim::Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = bytes / 4;
  r.gpus_per_thread = 1;
  r.protocol = protocol;
  r.algorithm = std::move(algorithm);
  return r;
}

}  // namespace twinccl::fidelity
