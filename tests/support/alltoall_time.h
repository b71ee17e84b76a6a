// nccl-tests' alltoall as the model times it (float, one process per GPU), for tests:
//
//   const double us = twinccl_test::alltoall_us(topo::load_topology("aws-p5-2"), 12288);
//   // 12288 bytes to each peer; per rank's buffer: pass bytes / t.gpu_count()
#pragma once

#include <cstddef>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/topology.h"

namespace twinccl_test {

inline double alltoall_us(const twinccl::topo::Topology& t, std::size_t peer_bytes,
                          twinccl::sim::Fidelity fidelity = twinccl::sim::Fidelity::analytic) {
  twinccl::sim::Request r;
  r.fidelity = fidelity;
  r.spec.kind = twinccl::OpKind::all_to_all;
  r.spec.count = peer_bytes / 4;  // float
  r.gpus_per_thread = 1;
  return twinccl::sim::predict(t, r).time_us;
}

}  // namespace twinccl_test
