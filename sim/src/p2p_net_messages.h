// Internal: the network messages of NCCL's grouped send/recv across nodes (alltoall), and the
// host time the net plugin's proxy spends on their completions.
//
//   const P2pNetMessages messages(view);   // the communicator's chunk and channels, once a call
//   messages.of_send(128.0 * 1024);        // network messages one peer's send takes
//   grouped_p2p_net_us(view, spec, DataType::float32, 23.0);  // 23 us: the hop the caller charged
// The round -> channel mapping behind the first message's wait (grouped_p2p_net_us:
// ncclP2pChannelBaseForRound, ncclP2pChannelForPart) follows NVIDIA/nccl v2.27.7-1; --nccl-version
// does not switch it, so a newer NCCL that maps rounds to channels differently is not followed.
#pragma once

#include "model.h"
#include "p2p_channels.h"

namespace twinccl::sim::detail {

// How NCCL (v2.23.4-1 .. v2.30.7-1) cuts a peer's send across nodes into network messages
// (p2p_net_messages.cc). The communicator's side (its chunk and p2p channels, from the channel
// search) is planned once, at construction; each send then costs a few divisions.
class P2pNetMessages {
 public:
  explicit P2pNetMessages(const TopologyView& view);
  // Network messages of one peer's send of `peer_bytes` (every part's; an empty send is one).
  double of_send(double peer_bytes) const;
  // The parts (channels) one peer's send of `peer_bytes` > 0 is split into.
  int parts_of(double peer_bytes) const;
  // The bytes of one network message of a peer's send of `peer_bytes` > 0 (before the 4 KiB part
  // alignment: a part smaller than it is one smaller message).
  double message_bytes_of(double peer_bytes) const;
  // comm->p2pnChannels: the channels p2p work is spread over (a power of 2).
  int p2p_channels() const { return plan_.p2p_channels; }

 private:
  NcclP2pPlan plan_;  // the communicator's chunk and channels (p2p_channels.h, their one owner)
};

// What a call NCCL runs as one group of sends and receives across the view's nodes costs beyond
// its wire and the one network hop `charged_hop_us` its caller charged (us; 0 for other kinds,
// in one node, or where the class has neither figure): the proxy's host time on its busiest
// GPU's completions (a send and a receive completion for every network message it sends and
// receives, in series with the wire) and its first messages' wait for the receivers' control
// messages (network_class.h's slot round trip: one per batch of p2p work a channel runs in
// series, less the charged hop, never below 0). The kinds: all_to_all, all_to_all_v (nccl-tests'
// alltoall; the direct schedule's grouped send/recv), gather, scatter, gather_v, scatter_v (one
// root exchanging with every rank). p2p_net_messages.cc says why each gets which part.
double grouped_p2p_net_us(const TopologyView& view, const CollectiveSpec& spec, DataType dtype,
                          double charged_hop_us);

// The same wait for one batch whose sends carry `send_bytes` to a peer across nodes (a
// sendrecv's network send: one work, one batch), less the network hop `charged_hop_us` its caller
// charged, us; 0 where the class has no slot round trip or the first message goes eagerly.
// `plan`: the communicator's p2p plan (P2pNetMessages of `view`, made once by the caller).
double net_batch_first_slot_us(const TopologyView& view, const P2pNetMessages& plan,
                               double send_bytes, double charged_hop_us);

}  // namespace twinccl::sim::detail
