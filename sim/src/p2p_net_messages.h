// Internal: the network messages of NCCL's grouped send/recv across nodes (alltoall), and the
// host time the net plugin's proxy spends on their completions.
//
//   const P2pNetPlan plan = nccl_p2p_net_plan(view, 128.0 * 1024);  // one peer's send
//   plan.messages;                              // network messages it takes
//   all_to_all_net_completion_us(view, 128.0 * 1024);  // 0 where the class has no figure
#pragma once

#include "model.h"

namespace twinccl::sim::detail {

// How NCCL (v2.23.4-1 .. v2.30.7-1) cuts one peer's send across nodes (p2p_net_messages.cc).
struct P2pNetPlan {
  double chunk_bytes = 0.0;    // comm->p2pChunkSize: NCCL_P2P_NET_CHUNKSIZE, <= NCCL_BUFFSIZE / 8
  int p2p_channels = 1;        // comm->p2pnChannels
  int channels_per_peer = 1;   // comm->p2pnChannelsPerPeer (a network peer's)
  int parts = 1;               // channels one peer's send is split over
  double message_bytes = 0.0;  // one network message: the chunk, / 4 or / 2 for a small send
  double messages = 0.0;       // network messages of one peer's send (every part's)
};
P2pNetPlan nccl_p2p_net_plan(const TopologyView& view, double peer_bytes);

// The proxy's host time in an all_to_all of `peer_bytes` to each peer across the view's nodes: a
// send and a receive completion for every network message a GPU sends and receives, in series
// with the wire (us; 0 in one node or without a per-completion figure).
double all_to_all_net_completion_us(const TopologyView& view, double peer_bytes);

}  // namespace twinccl::sim::detail
