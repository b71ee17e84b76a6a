// The network fill of NCCL's NVLS-tree all_reduce across nodes: the first step of every head's
// chunk crossing the tree of nodes up and back down before the pipeline runs full. NCCL's tuning
// model leaves it out (its NVLS-tree latency is 2 log2(nodes) hop latencies, no bytes).
//
// How it works (NVIDIA/nccl v2.27.7-1 src/device/all_reduce.h:521-620, RunWorkColl NVLS_TREE):
// each channel's warps split into scatter, gather, reduce and broadcast groups; every NVLS head of
// a node reduces its chunk (chunkCount elements, enqueue.cc's NVLS-tree chunk, nvls.cc
// NCCL_NVLS_CHUNKSIZE) with NVLS, receives its children's from the network, and sends one Simple
// step up its tree (`prims.directRecvDirectSend` with ProtoSimple<1, 1>); the root sends it back
// down the same way. A Simple step goes to the network only once the GPU has written all of it
// (src/transport/net.cc sendProxyProgress: the step's tail, then isend). The first step of all
// channels x heads (enqueue.cc's concurrentOps) is in flight at once; on EFA a hop is charged that
// whole step at the node's NICs' line rate (network_class.h queues_whole_steps: AWS's
// in-flight queuing [assumed]; on InfiniBand the NVLS fill alone holds the asserted rows), on each
// of the 2 log2(nodes) hops. Per hop the busiest node moves its share of NCCL's two trees: half a
// step on 2 nodes (each node sends one tree's half of the channels), a whole one from 4 (an inner
// node of one tree takes its two children's halves). As in the NVLS fill beside it
// (nvls_pipeline_fill_us), K/(K+1) of it is exposed for K steps per channel.
// Example, 32 p5 nodes (16 NVLS channels x 8 heads, aws-ofi-nccl's 512 KiB chunk, 8 x 48 GB/s of
// NICs a node), 4 GiB: a step is 128 x 512 KiB = 64 MiB, 10 hops x 64 MiB / 384 GB/s x 64/65 =
// 1.72 ms (NCCL's own 64 KiB from 4 nodes would make it 8 MiB).
// Picture, 4 nodes (one tree; each arrow one step of every head of the tree's channels):
//     up:  n1 -> n0 <- n2 <- n3        down: n0 -> n1, n0 -> n2 -> n3      (2 x log2(4) = 4 hops)
// Not in the tuner's ranking (Channels::all): it never changes NCCL's choice.

#include "model.h"
#include "network_class.h"

namespace twinccl::sim::detail {

double nvls_tree_net_fill_us(const TopologyView& v, NcclAlgo algo, OpKind kind, double bytes,
                             const NvlsSteps& s) {
  if (algo != NcclAlgo::nvls_tree || kind != OpKind::all_reduce || v.nodes < 2 || bytes <= 0.0 ||
      !(v.inter_gbps > 0.0) || !network_terms(v.network).queues_whole_steps) {
    return 0.0;
  }
  check_nvls_steps(s, "nvls_tree_net_fill_us");
  // One step of every channel and head, K/(K+1) of it exposed: the NVLS fill's steps
  // (nccl_nvls_steps, nvls_steps.cc).
  const double hops = 2.0 * nccl_log2i(v.nodes);
  // Per hop the busiest node's NICs move its share of both trees (nccl_dtree_busiest_node_load / 2
  // each way): half a step on 2 nodes, where each node sends one tree's half; a whole step from 4
  // nodes, where an inner node of one tree takes its two children's halves.
  const double per_hop_share = nccl_dtree_busiest_node_load(v.nodes) / 2.0;
  return hops * per_hop_share * s.exposed * s.step_bytes / (1000.0 * v.inter_gbps);
}

}  // namespace twinccl::sim::detail
