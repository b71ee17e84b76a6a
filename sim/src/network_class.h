// Internal: what a scale-out network's class changes in NCCL's cost model (topology fact
// `network`, topology.h NetworkClass): the latency of one network hop, per protocol.
//
// How it works. NCCL's tuning model (graph/tuning.cc hwLat[NCCL_HW_NET]) gives one network hop
// 2.7 / 4.0 / 14 us (ring LL / LL128 / Simple; tree 5.0 / 8.5 / 14), measured on InfiniBand
// through its IB verbs transport; RoCE runs the same transport and keeps them. A network reached
// through a net plugin costs what the plugin's stack costs per message, and where the provider
// publishes its own model we take its figure:
//   efa  AWS's tuner for P5/P5e in aws-ofi-nccl (src/tuner/nccl_ofi_model.cpp,
//        model_platform_params: net_lat 20 us; include/nccl_ofi_tuner.h TUNER_NET_COMP_OVERHEAD
//        3 us on Simple: "~2us cost in the device and ~1us to write that completion up to the
//        host stack"): a hop costs 20 us (LL, LL128) and 23 us (Simple), every algorithm.
//        P5en's row says 18 us; the p5 figure is used for every EFA machine [assumed for p4d and
//        p6-b200, which AWS's tuner has no row for].
//   tcpxo  no public per-message figure found; NCCL's IB latencies [assumed], so small calls on
//        GCP A3 Mega are predicted too fast (docs/fidelity.md says by how much).
// The hop's cost enters NCCL's ranking as it does on the machine (AWS's plugin ranks with its own
// model from 3 nodes), and the time of the call.
#pragma once

#include <algorithm>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim::detail {

struct NetworkHop {
  double ll_us, ll128_us, simple_us;  // 0 = NCCL's own hwLat figure for that protocol
};

inline NetworkHop network_hop(topo::NetworkClass network) {
  switch (network) {
    case topo::NetworkClass::efa:
      return {20.0, 20.0, 23.0};
    case topo::NetworkClass::infiniband:
    case topo::NetworkClass::roce:
    case topo::NetworkClass::tcpxo:
      break;
  }
  return {0.0, 0.0, 0.0};
}

// One network hop of `protocol` on `network`, given NCCL's figure for it, plus a topology's
// `network_hop_extra_us` (what `twinccl calibrate` fits from multi-node small rows), never below 0.
inline double network_hop_us(topo::NetworkClass network, Protocol protocol, double nccl_us,
                             double extra_us = 0.0) {
  const NetworkHop h = network_hop(network);
  const double own = protocol == Protocol::ll      ? h.ll_us
                     : protocol == Protocol::ll128 ? h.ll128_us
                                                   : h.simple_us;
  return std::max(0.0, (own > 0.0 ? own : nccl_us) + extra_us);
}

}  // namespace twinccl::sim::detail
