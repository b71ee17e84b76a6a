// Internal: NCCL's p2p channels, the one owner of the decision for a send's price inside a node
// (p2p_send_price.h) and for the network messages of sends across nodes (p2p_net_messages.h).
//
//   const NcclP2pPlan plan = nccl_p2p_plan(view_of(h100_cluster(2), 16));
//   // plan.p2p_channels == 16, plan.per_peer == 2 (a network peer's 2), plan.fewest == 1
//   nccl_p2p_send_channels(plan, 64 << 20);  // 2: a send's parts double up to the peer's 2
//   const TopologyView a100 = view_of(dgx_a100(), 8);
//   nccl_p2p_send_channels(nccl_p2p_plan(a100), 128 << 20);  // 8; 16 at 256 MiB
//   nccl_p2p_channel_gbps(a100);  // 20: a 128 MiB send moves at most 160 GB/s (at 256 MiB, 320:
//                                 // the NVLink's 240 binds instead)
//
// How it works (NVIDIA/nccl, read, not copied; v2.28.9-1 unless said; the version differences in
// kNcclVersionTerms). A communicator has twice its graph's channels (src/graph/connect.cc
// ncclTopoPostset; across nodes twice again below 16 where a Hopper or Blackwell channel is faster
// than 45 GB/s), at most MAXCHANNELS; its p2p channels are that rounded up to a power of 2. Every
// peer gets the fewest channels any peer needs (src/graph/paths.cc ncclTopoGetNchannels,
// ncclTopoComputeP2pChannels), rounded up: 2 per NVLink between two GPUs of a node, 2 over PCIe,
// and a network peer 2 halved while it times the ranks exceeds 4 x the p2p channels but at least
// the NICs the GPU drives by bandwidth (TopologyView::nics_per_gpu_by_bw). So across nodes a send
// between two GPUs of one node runs on the network peer's channels too (2 on 2 - 4 nodes of 8 GPUs
// and 8 NICs, 1 from 8 nodes; NVIDIA/nccl#1272: 32 GH200 lost a quarter of sendrecv's bandwidth
// with 2.20, back with NCCL_NCHANNELS_PER_NET_PEER=4). A send starts on the peer's count halved
// until it times the ranks fits the p2p channels ("one channel per operation", src/enqueue.cc
// scheduleP2pTasksToPlan), on no more parts than its bytes fill at the smallest part, and doubles
// while a part is larger than the largest, within the peer's count (addP2pToPlan,
// calcP2pChannelCount): parts of chunk / 8 to chunk x 32 in one node, chunk / 2 to chunk across
// nodes. The chunk (src/init.cc): NCCL_P2P_NET_CHUNKSIZE across nodes (128 KiB, 512 KiB under
// aws-ofi-nccl's export), NCCL_P2P_NVL_CHUNKSIZE 512 KiB where every path is NVLink, else
// NCCL_P2P_PCI_CHUNKSIZE 128 KiB, at most NCCL_BUFFSIZE / 8. 8 A100s on NVSwitch: 24 channels ->
// 32 p2p; 24 a peer -> 32; nChannelsMin 4: 64 MiB - 128 MiB run on 8 channels, 256 MiB on 16
// (li-plus/playground's sendrecv -g 8: 111 GB/s at 128 MiB, 189 at 256).
// A channel moves at most the per-channel speed of NCCL's search in one node
// (ChannelPlan::per_channel_gbps, 20 GB/s on A100, 30 on H100) [assumed: NCCL prices no send/recv;
// its search's speed of a channel is the figure it gives; one CTA copies a channel's data whatever
// the communicator spans]. NVIDIA GPUs only (RCCL has its own rules: nullopt there, where a send
// keeps its route's rate), and only the sends that stay in a node: a network send keeps its NIC's
// rate (how fast one network channel moves is the net plugin's, not in NCCL's code).
#pragma once

#include "model.h"

namespace twinccl::sim::detail {

struct NcclP2pPlan {
  int p2p_channels = 1;         // comm->p2pnChannels (a power of 2)
  int per_peer = 1;             // comm->p2pnChannelsPerPeer
  int fewest = 1;               // a send's nChannelsMin
  int most = 1;                 // a send's nChannelsMax
  double chunk_bytes = 0.0;     // comm->p2pChunkSize
  double min_part_bytes = 0.0;  // a part's least bytes
  double max_part_bytes = 0.0;  // the size above which a send's parts double
  bool starts_by_parts = true;  // from 2.22.3: no more parts than its bytes fill
};
// The communicator's p2p plan on `view` (every rank's alike).
NcclP2pPlan nccl_p2p_plan(const TopologyView& view);
// The channels (parts) one send of `bytes` > 0 runs on under `plan`.
int nccl_p2p_send_channels(const NcclP2pPlan& plan, double bytes);

// One channel's speed for a send between two GPUs of one node, GB/s; 0 on AMD GPUs or one rank.
// Such a send moves at most nccl_p2p_send_channels x this.
double nccl_p2p_channel_gbps(const TopologyView& view);

}  // namespace twinccl::sim::detail
