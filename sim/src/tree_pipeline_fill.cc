// The pipeline fill of NCCL's tree all_reduce (Simple; LL and LL128 on their network hops), which
// NCCL's tuning model leaves out of its latency.
//
// How it works (device/all_reduce.h runTreeUpDown, enqueue.cc calcCollChunking, graph/trees.cc):
// inside a node NCCL's tree is a chain of the node's GPUs, across nodes a (double) binary tree;
// the data moves in chunks of one Simple buffer step (4 MiB / 8 = 512 KiB per channel), reduced
// up the chain and the tree to the root, then broadcast back down. The first chunk crosses
// 2 ((ppn - 1) + log2(nodes)) hops before the last GPU holds it, each hop one chunk at the
// channel's rate; only then does the pipeline run at the tree's bandwidth. A 4-GPU chain on 2
// nodes (ppn 2):
//     up:   g0 -> g1 ==net==> g3 <- g2        down: g3 -> g2, g3 ==net==> g1 -> g0
//     fill = 2 x (1 + 1) hops x 512 KiB / per-channel GB/s
// On 20 GB200 NVL72 racks (ppn 72, 16 channels at 24 GB/s, NCCL's Blackwell per-channel tree cap)
// that is 2 x (71 + 4) x 512 KiB / 24 GB/s = 3.3 ms; coreweave nccl-tests PR 48's times (NVLS off)
// fit ~4.8 ms + S / 215 GB/s, NCCL's own tree latency is 0.7 ms. On 8-GPU nodes the chain is short
// (2 x (7 + log2(nodes)) hops, ~0.2-0.3 ms). Calls smaller than a chunk per channel fill with
// what they have. Not in the tuner's ranking (Channels::all), as NVLS's fill: it never changes
// NCCL's choice.
// LL and LL128 (tree across nodes): inside a node the next GPU takes the data line by line as its
// flags arrive, so the chain adds no chunk time; a network hop does: the sending proxy posts a
// step to the network only once the GPU has written all of it (NVIDIA/nccl v2.28.7-1
// src/transport/net.cc:1272-1313: the step's tail, then for LL/LL128 in host memory every line's
// flag, before isend). So the first chunk waits one step at the channel's rate on each of the
// 2 log2(nodes) network hops, beyond the hop latency NCCL's model charges. The chunk is
// enqueue.cc's (nccl_tree_chunk_bytes), written at the channel's rate as the call runs: on 16 p5
// nodes (8 channels, tree/LL128, busBw 22.0 GB/s a channel, the kernel's broadcast warps, below
// NCCL's 29: tree_ll128_split_algbw_gbps) 256 MiB moves 576000-byte steps: 8 x 26.2 us = 209 us;
// 32 MiB's 72000-byte steps 26 us.
#include <algorithm>

#include "model.h"
#include "network_class.h"

namespace twinccl::sim::detail {

double tree_pipeline_fill_us(const TopologyView& v, NcclAlgo algo, Protocol protocol, OpKind kind,
                             double bytes, const ChannelPlan& plan) {
  if (algo != NcclAlgo::tree || kind != OpKind::all_reduce || bytes <= 0.0 || v.nranks < 2 ||
      plan.channels < 1) {
    return 0.0;
  }
  // LL and LL128 cross NVLink line by line (no store and forward); only their network hops wait
  // for a whole step, and only across nodes.
  const bool simple = protocol == Protocol::simple;
  if (!simple && v.nodes < 2) return 0.0;
  // The step is written at the rate the call runs (nccl_call_bus_gbps: the tree/LL128 kernel's
  // broadcast warps on Hopper and Blackwell), not at NCCL's ranking figure.
  const double per_channel_gbps =
      nccl_call_bus_gbps(v, plan, NcclAlgo::tree, protocol, kind) / plan.channels;
  if (per_channel_gbps <= 0.0) return 0.0;
  const double hops =
      simple ? 2.0 * ((v.ranks_per_node - 1) + nccl_log2i(v.nodes)) : 2.0 * nccl_log2i(v.nodes);
  const double chunk =
      std::min(nccl_tree_chunk_bytes(v, protocol, bytes, plan.channels), bytes / plan.channels);
  return hops * chunk / (1000.0 * per_channel_gbps);
}

namespace {

// One binary tree of graph/trees.cc over ranks 0..n-1 rooted at 0 (v2.27.3-1 trees.cc:31-62, in
// words): the root has one child; any other rank has its parent, and with b its lowest set bit,
// a first child rank - b/2 (when b > 1) and a second rank + b/2, or the nearest rank + b/4,
// rank + b/8 ... below n. Returns how many links (parent and children) `rank` has.
int btree_links(int n, int rank) {
  if (rank == 0) return n > 1 ? 1 : 0;
  const int half = (rank & -rank) >> 1;  // b/2
  if (half == 0) return 1;               // an odd rank: a leaf
  int links = 2;                         // the parent and rank - b/2
  for (int step = half; step > 0; step >>= 1) {
    if (rank + step < n) return links + 1;
  }
  return links;
}

}  // namespace

double nccl_dtree_busiest_node_load(int nodes) {
  double busiest = 0.0;
  for (int node = 0; node < nodes; ++node) {
    // The second tree: the first shifted by one (odd node counts) or mirrored (even).
    const int other = nodes % 2 == 1 ? (node - 1 + nodes) % nodes : nodes - 1 - node;
    busiest = std::max(busiest, 0.5 * (btree_links(nodes, node) + btree_links(nodes, other)));
  }
  return busiest;
}

double pipeline_fills_us(const TopologyView& v, NcclAlgo algo, Protocol protocol, OpKind kind,
                         double bytes, int requested_channels) {
  const ChannelPlan launched =
      nccl_launched_channels(v, nccl_channels(v, requested_channels), algo, protocol, bytes);
  // The NVLS steps once per call, for every cost that reads them.
  const bool nvls = algo == NcclAlgo::nvls || algo == NcclAlgo::nvls_tree;
  const NvlsSteps steps = nvls ? nccl_nvls_steps(v, algo, bytes) : NvlsSteps{};
  return nvls_pipeline_fill_us(v, algo, kind, bytes, requested_channels, steps) +
         nvls_step_sync_us(v, algo, kind, bytes, steps) +
         tree_pipeline_fill_us(v, algo, protocol, kind, bytes, launched) +
         ring_slice_sync_us(v, algo, protocol, kind, bytes, launched) +
         nvls_tree_net_fill_us(v, algo, kind, bytes, steps) +
         net_window_wait_us(v, algo, protocol, kind, bytes, launched, steps) +
         nvls_tree_first_message_wait_us(v, algo, protocol, kind, bytes, steps) +
         ring_net_window_wait_us(v, algo, protocol, kind, bytes, launched) +
         (v.nodes > 1 ? network_terms(v.network).call_floor_us : 0.0);  // TCPX's floor
}

}  // namespace twinccl::sim::detail
