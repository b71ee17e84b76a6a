// Grouped point-to-point exchanges priced by the simulator: nccl-tests' sendrecv_perf and
// hypercube_perf, which are rounds of send/recv pairs rather than one collective call.
//
//   sim::Tuner tuner(topo::dgx_h100(), 8);                          // the communicator
//   sim::P2pPattern ring = sim::sendrecv_pattern(8, 1 << 20);       // bytes each rank sends
//   double us = sim::predict_p2p(tuner, ring, sim::Fidelity::analytic).time_us;
//
// A round's sends start together (one ncclGroupStart/End); the next round starts when every send
// of the round has ended. Ranks are the tuner's communicator ranks.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "twinccl/sim/timing.h"
#include "twinccl/sim/tuner.h"

namespace twinccl::sim {

struct P2pSend {
  int src = 0, dst = 0;  // communicator ranks
  double bytes = 0;
};
struct P2pRound {
  std::vector<P2pSend> sends;
};
using P2pPattern = std::vector<P2pRound>;

// sendrecv_perf: one round, rank r sends `bytes` to r+1 and receives from r-1 (mod nranks).
P2pPattern sendrecv_pattern(int nranks, double bytes);
// hypercube_perf (an all-gather): for mask = 1, 2, 4, ... < nranks, rank r exchanges mask x
// `bytes_per_rank` with r ^ mask. nranks must be a power of two (InvalidArgument otherwise).
P2pPattern hypercube_pattern(int nranks, double bytes_per_rank);

struct P2pPrediction {
  double time_us = 0;
  Fidelity fidelity = Fidelity::analytic;
  std::string model;  // "nccl-p2p" (analytic) or "flow"
};

// analytic: per round, each send at its route's slowest link shared by the round's sends that
// cross it in the same direction (network links at NCCL's share of a NIC), plus NCCL's ring/Simple
// software latency (base once per round, one hop by the route's link class); the round lasts as
// long as its slowest send. flow: the same rounds and delays played on SimGrid (link contention).
// gpus_per_thread: as Request::gpus_per_thread (nccl-tests -g; 0 = the kernels alone), charged
// per round, each round being one group launch.
P2pPrediction predict_p2p(const Tuner& tuner, const P2pPattern& pattern, Fidelity fidelity,
                          int gpus_per_thread = 0);

}  // namespace twinccl::sim
