// Internal: the channels NCCL runs one send of a send/recv on between two GPUs of one node, and so
// the most that send moves at. Its one reader is a send's price (p2p_send_price.h).
//
//   const std::optional<P2pChannels> c = nccl_p2p_channels(view_of(dgx_a100(), 8), 12, 128 << 20);
//   // c->channels == 8, c->cap_gbps == 8 x 20 = 160; at 256 MiB 16 channels, 320 (the NVLink's 240
//   // binds instead)
//
// How it works (NVIDIA/nccl, read, not copied; v2.29.3-1 unless said). A communicator has twice its
// graph's channels (src/graph/connect.cc ncclTopoPostset, at most MAXCHANNELS); its p2p channels
// are that rounded up to a power of 2, and one peer gets at most 2 per NVLink between the two GPUs
// (src/graph/paths.cc ncclTopoGetNchannels; 2 over PCIe), also rounded up and at most the p2p
// channels. A send starts on nChannelsMin, the peer's count halved until it times the ranks fits
// the p2p channels ("one channel per operation", src/enqueue.cc scheduleP2pTasksToPlan), and on no
// more parts than its bytes fill at chunk / 8 each (from 2.22.3); it doubles while a part is larger
// than 32 chunks and the count stays within the peer's (addP2pToPlan, calcP2pChannelCount). The p2p
// chunk is 512 KiB where every path is NVLink (NCCL_P2P_NVL_CHUNKSIZE), else 128 KiB. 8 A100s on
// NVSwitch: 24 channels -> 32 p2p; 24 a peer -> 32; nChannelsMin 4: 64 MiB - 128 MiB run on 8
// channels, 256 MiB on 16 (li-plus/playground's sendrecv -g 8: 111 GB/s at 128 MiB, 189 at 256).
// Before 2.20.3 a one-node communicator also capped the count at 4 x p2p channels / ranks.
// A channel moves at most the graph's per-channel speed (ChannelPlan::per_channel_gbps, 20 GB/s on
// A100) [assumed: NCCL prices no send/recv; its search's speed of a channel is the figure it
// gives]. Only a one-node communicator of NVIDIA GPUs (across nodes NCCL's rule has other terms,
// and RCCL its own): nullopt elsewhere, where a send keeps its route's rate.
#pragma once

#include <optional>

#include "model.h"

namespace twinccl::sim::detail {

struct P2pChannels {
  int channels = 1;
  double cap_gbps = 0.0;  // channels x one channel's speed
};
// `nvlinks_per_gpu`: one GPU's NVLinks (TopologySummary), 0 without NVLink.
std::optional<P2pChannels> nccl_p2p_channels(const TopologyView& view, int nvlinks_per_gpu,
                                             double bytes);

}  // namespace twinccl::sim::detail
