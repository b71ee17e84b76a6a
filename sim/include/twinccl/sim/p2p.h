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

// NCCL's p2p channels on the tuner's communicator, as the model takes them (the one owner:
// sim/src/p2p_channels.h): a send between two GPUs of one node moves at most per_peer channels x
// channel_gbps. Across nodes every peer gets the network peers' few (2, 1 at scale from NCCL
// 2.20.3), the sends inside a node too.
struct P2pChannelPlan {
  int p2p_channels = 0;       // the communicator's p2p channels (a power of 2)
  int per_peer = 0;           // the most one send runs on
  double channel_gbps = 0.0;  // one channel's speed inside a node; 0 = no cap (AMD GPUs, one rank)
};
P2pChannelPlan p2p_channel_plan(const Tuner& tuner);

}  // namespace twinccl::sim
