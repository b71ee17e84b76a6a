// NCCL's p2p channels of a communicator and of one send (p2p_channels.h says how and where it was
// read).
#include "p2p_channels.h"

#include <algorithm>
#include <cmath>

#include "nccl_tuning_table.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim::detail {
namespace {

int pow2_up(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

bool since(const TopologyView& view, int code) { return !nccl_before(view, code); }

// comm->nChannels after ncclTopoPostset: twice the graph's, across nodes twice again below 16
// where a Hopper (Blackwell from 2.25.1) ring channel is faster than 45 GB/s; at most
// MAXCHANNELS.
int communicator_channels(const TopologyView& view, int max_channels) {
  const ChannelPlan graph = nccl_channels(view, 0);
  int channels = std::min(max_channels, 2 * graph.channels);
  const bool compute_doubled = view.arch == topo::GpuArch::hopper ||
                               (view.arch == topo::GpuArch::blackwell &&
                                since(view, kNcclVersionTerms.compute_channels_blackwell_since));
  if (view.nodes > 1 && compute_doubled &&
      graph.per_channel_gbps > kNccl.compute_channels_above_gbps &&
      channels < kNccl.compute_channels_below) {
    channels = std::min(max_channels, 2 * channels);
  }
  return channels;
}

// A network peer's channels (ncclTopoGetNchannels' remote branch) on a communicator of
// `p2p_channels` (before the power of 2, as NCCL compares it).
int net_peer_channels(const TopologyView& view, int p2p_channels) {
  const NcclVersionTerms& v = kNcclVersionTerms;
  if (!since(view, v.p2p_net_peer_two_channels_since)) return 1;
  if (!since(view, v.p2p_net_peer_by_scale_since)) return kNccl.p2p_net_peer_channels;
  int most = kNccl.p2p_net_peer_channels;
  while (most * view.nranks > p2p_channels * kNccl.p2p_net_peer_ranks_per_p2p && most > 1) {
    most /= 2;
  }
  return std::max(std::max(1, view.nics_per_gpu_by_bw), most);
}

double div_up(double a, double b) { return std::ceil(a / b); }

}  // namespace

NcclP2pPlan nccl_p2p_plan(const TopologyView& view) {
  const NcclVersionTerms& v = kNcclVersionTerms;
  const int max_channels =
      since(view, v.max_channels_64_since) ? kNccl.max_channels : v.max_channels_before_2_25;
  const int raw = communicator_channels(view, max_channels);
  NcclP2pPlan plan;
  plan.p2p_channels = pow2_up(raw);
  const bool nvlink = view.intra_class == LinkClass::nvlink && view.nvlinks_per_gpu > 0;
  int fewest_needed = std::min(raw, nvlink ? kNccl.p2p_channels_per_nvlink * view.nvlinks_per_gpu
                                           : kNccl.p2p_pci_peer_channels);
  if (view.nodes > 1) fewest_needed = std::min(fewest_needed, net_peer_channels(view, raw));
  plan.per_peer = std::min(pow2_up(fewest_needed), plan.p2p_channels);
  const int nranks = std::max(1, view.nranks);
  plan.fewest = plan.per_peer;
  while (plan.fewest * nranks > plan.p2p_channels && plan.fewest > 1) plan.fewest /= 2;
  plan.most = plan.per_peer;
  if (view.nodes == 1 && !since(view, v.p2p_channels_uncapped_since)) {
    while (plan.most * nranks > 4 * plan.p2p_channels && plan.most > 1) plan.most /= 2;
  }
  double chunk = nvlink ? kNccl.p2p_nvl_chunk_bytes : kNccl.p2p_pci_chunk_bytes;
  if (view.nodes > 1) {
    chunk = view.p2p_net_chunk_bytes > 0.0 ? view.p2p_net_chunk_bytes
                                           : topo::kNcclDefaultP2pNetChunkBytes;
  }
  plan.chunk_bytes = std::min(chunk, nccl_simple_step_bytes(view));  // init.cc: at most a step
  plan.min_part_bytes = view.nodes > 1 ? std::floor(plan.chunk_bytes / 2)
                                       : plan.chunk_bytes * kNccl.p2p_min_part_per_chunk;
  plan.max_part_bytes =
      view.nodes > 1 ? plan.chunk_bytes : plan.chunk_bytes * kNccl.p2p_max_part_per_chunk;
  plan.starts_by_parts = since(view, v.p2p_channels_by_parts_since);
  return plan;
}

int nccl_p2p_send_channels(const NcclP2pPlan& plan, double bytes) {
  int channels = plan.fewest;
  if (plan.starts_by_parts && plan.min_part_bytes > 0.0) {
    channels = static_cast<int>(
        std::clamp(div_up(bytes, plan.min_part_bytes), 1.0, static_cast<double>(plan.fewest)));
  }
  double part = std::max(plan.min_part_bytes, div_up(bytes, channels));
  while (part > plan.max_part_bytes && channels <= plan.most / 2) {
    channels *= 2;
    part = div_up(bytes, channels);
  }
  return std::max(1, channels);
}

double nccl_p2p_channel_gbps(const TopologyView& view) {
  if (view.nranks < 2 || topo::is_amd(view.arch)) return 0.0;
  // One channel's speed is the one-node search's, whatever the communicator spans.
  TopologyView node = view;
  node.nodes = 1;
  node.nranks = std::max(1, view.ranks_per_node);
  return nccl_channels(node, 0).per_channel_gbps;
}

}  // namespace twinccl::sim::detail
