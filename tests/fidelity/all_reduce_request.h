// The request nccl-tests makes of the model for one all_reduce row, for the fidelity tests:
//
//   const Prediction p = predict(topo::load_topology("aws-p5-4"), all_reduce_request(256u << 20));
//   const Prediction g = predict(t, all_gather_request(32u << 20, t.gpu_count(), Protocol::ll128));
//
// float32 sum of `bytes` per rank, one GPU per process (-g 1: the per-call host launch nccl-tests
// measures), NCCL's choice unless `protocol` / `algorithm` force one. fixed_latency_us(t, r):
// what such a call pays beyond its bandwidth term.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/topology.h"

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

// The same for an all_gather row: `bytes` is nccl-tests' size column (every rank's part
// together), so each of `ranks` ranks contributes bytes / ranks.
inline sim::Request all_gather_request(std::size_t bytes, int ranks,
                                       std::optional<sim::Protocol> protocol = std::nullopt,
                                       std::string algorithm = {}) {
  sim::Request r = all_reduce_request(bytes, protocol, std::move(algorithm));
  r.spec.kind = OpKind::all_gather;
  r.spec.count = bytes / 4 / static_cast<std::size_t>(ranks);
  return r;
}

// What a call pays beyond bytes / algbw on `topology`: NCCL's latency, the fills and any floor
// (the prediction with software latency, minus the one without).
inline double fixed_latency_us(const topo::Topology& topology, sim::Request r) {
  const double with_latency = sim::predict(topology, r).time_us;
  r.software_latency = false;
  return with_latency - sim::predict(topology, r).time_us;
}

}  // namespace twinccl::fidelity
