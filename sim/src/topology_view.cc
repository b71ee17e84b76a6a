// TopologyView and NCCL's channel choice: the few numbers of a topology the NCCL model reads.
//
// How it works. The ranks 0..n-1 span nodes node(0)..node(n-1) (presets number ranks node by node).
// intra: one GPU's NVLink bandwidth (all its NVLinks), else its PCIe link, else its fastest link
// (a torus of unknown arch). inter: one node's NICs, each capped by its PCIe link, as NCCL's graph
// search caps a channel by the slowest hop. Channels (search.cc, paraphrased): take the highest
// speed of the arch's list that fits the intra bandwidth, as many channels of it as fit (at most
// 16), then double the channels and halve the speed when it is >= 25 GB/s. On 8xH100 (370.8 GB/s)
// that is 6 x 60, doubled to 12 x 30 GB/s: NCCL's own estimate (nccl-facts.md). Across nodes
// NCCL's search gives every channel a NIC at the highest speed of the arch's inter list that fits
// one NIC (PCIe-capped): one channel per NIC (at most one per GPU of a node and 16, the search's
// limit: a GB200 NVL72 rack has 72 NICs), 8 x 48 GB/s on a
// node of 8 GPUs and 8 x 400 Gb/s NICs (NVIDIA: "46-48 GB/s per NIC", nccl-tests issue 290).
// Eight AMD GPUs of one xGMI mesh (MI300X / MI325X / MI355X) are no search: RCCL takes its preset
// rings, whose channels carry the GPU's whole xGMI bandwidth (xgmi_mesh_rings below).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <span>

#include "model.h"
#include "network_class.h"
#include "twinccl/topologies/network_nccl_env.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim::detail {

TopologyView view_of(const topo::Topology& topology, int nranks) {
  const topo::TopologySummary s = topology.summary();
  TopologyView v;
  v.arch = s.arch;
  v.nranks = nranks;
  const int first_node = topology.vertex(topology.gpu(0)).node;
  const int last_node = topology.vertex(topology.gpu(nranks - 1)).node;
  v.nodes = std::max(1, last_node - first_node + 1);
  v.ranks_per_node = v.nodes == 1 ? nranks : std::min(nranks, std::max(1, s.gpus_per_node));
  v.nvls_capable = s.nvls_capable;
  v.memory_gbps = s.memory_gbps;
  v.network = s.network;
  v.host_cpu = topology.facts().host_cpu;
  v.network_hop_extra_us = s.network_hop_extra_us;
  v.nic_delivered_share = nic_delivered_share(topology);
  // The buffers the call runs with: the topology's, else its network's export (aws-ofi-nccl's on
  // EFA), else NCCL's (topologies/.../network_nccl_env.h, their one owner).
  v.p2p_net_chunk_bytes = topo::nccl_p2p_net_chunk(topology.facts()).bytes;
  v.nccl_buffsize_bytes = topo::nccl_buffsize(topology.facts()).bytes;
  if (s.nvlink_bandwidth_gbps > 0.0) {
    v.intra_class = LinkClass::nvlink;
    v.intra_gbps = s.nvlink_bandwidth_gbps;
    v.nccl_nvlink_gbps = s.nvlinks_per_gpu * topo::nvlink_link_bandwidth_gbps(s.arch);
  } else if (s.pcie_bandwidth_gbps > 0.0) {
    v.intra_class = LinkClass::pcie;
    v.intra_gbps = s.pcie_bandwidth_gbps;
  } else {
    v.intra_class = LinkClass::nvlink;
    for (topo::LinkId l : topology.links_of(topology.gpu(0))) {
      v.intra_gbps = std::max(v.intra_gbps, topology.link(l).bandwidth_gbps);
    }
  }
  if (s.nics_per_node > 0 && s.nic_bandwidth_gbps > 0.0) {
    const double per_nic = s.pcie_bandwidth_gbps > 0.0
                               ? std::min(s.nic_bandwidth_gbps, s.pcie_bandwidth_gbps)
                               : s.nic_bandwidth_gbps;
    v.inter_gbps = s.nics_per_node * per_nic;
    v.nics_per_node = s.nics_per_node;
    v.nic_gbps = per_nic;
    // getLocalNetCountByBw (NVIDIA/nccl v2.28.9-1 src/graph/topo.cc): a GPU's nearest NICs (a
    // node's NICs shared evenly among its GPUs, at least one), added until their rates reach the
    // GPU's PCIe link (NCCL's width x speed / 80: 48 GB/s at gen5 x16, what pcie_bandwidth_gbps
    // holds).
    const int nearest = std::max(1, s.nics_per_node / std::max(1, s.gpus_per_node));
    double reached = 0.0;
    int counted = 0;
    while (counted < nearest && reached < s.pcie_bandwidth_gbps) {
      reached += per_nic;
      ++counted;
    }
    v.nics_per_gpu_by_bw = std::max(1, counted);
    v.nic_ports = std::max(1, topology.facts().nic_ports);
    v.pcie_gbps = s.pcie_bandwidth_gbps;
  }
  v.nvlinks_per_gpu = s.nvlinks_per_gpu;
  return v;
}

NcclNets nccl_nets(const TopologyView& view) {
  NcclNets nets{view.nics_per_node, view.nic_gbps};
  // The ports of one card become one device of their summed speed: NCCL's IB / RoCE transport
  // merges them from 2.20.3 (net_ib.cc ncclIbMergedDevs), any network NCCL makes virtual devices
  // of from 2.24.3 (topo.cc ncclTopoMakeVNics); kNcclVersionTerms. The card's PCIe link still
  // bounds what its GPUs reach through it.
  const int ports = std::max(1, view.nic_ports);
  const int since = network_terms(view.network).nccl_ib_transport
                        ? kNcclVersionTerms.ib_merge_nics_since
                        : kNcclVersionTerms.nic_fusion_since;
  if (ports > 1 && view.nics_per_node >= ports && !nccl_before(view, since)) {
    nets.count = view.nics_per_node / ports;
    nets.gbps = ports * view.nic_gbps;
    if (view.pcie_gbps > 0.0) nets.gbps = std::min(nets.gbps, view.pcie_gbps);
  }
  return nets;
}

namespace {
// The highest speed of the arch's inter list that fits one network device (the last entry when
// none fits).
double speed_fitting(const TopologyView& view, double device_gbps) {
  const std::span<const double> speeds(*caps_of(view.arch).speeds_inter);
  for (double s : speeds) {
    if (s <= device_gbps) return s;
  }
  return std::min(device_gbps, speeds.back());
}
double inter_speed_gbps(const TopologyView& view) { return speed_fitting(view, view.nic_gbps); }
// NCCL's search reserves each ring channel's speed on every link the channel crosses
// (search.cc ncclTopoFollowPath): inside a node the ring visits every GPU, so a GPU's NVLink
// carries every channel but those that leave the node through its own NIC. Of the arch's inter
// speeds up to the NIC's, the one with the most channels x speed that fits (ncclTopoCompareGraphs
// keeps the graph with the higher nChannels x bw). 8 GPUs with 8 NICs: 7 channels cross each
// NVLink (8 x 48 on an H100, 336 <= 370.8, unchanged); a 64-GPU rack with 16 NIC channels: all
// 16 cross it, 16 x 96 = 1536 > 721.8 on GB300's 800G NICs, so 16 x 45.1 (721.6), as on GB200
// (16 x 48 = 768 did not fit either). Only behind a switch (NVLink, not xGMI's mesh of links).
void fit_channels_to_nvlink(const TopologyView& view, int& channels, double& speed) {
  if (view.intra_class != LinkClass::nvlink || view.arch == topo::GpuArch::cdna3 ||
      view.ranks_per_node < 2 || !(view.intra_gbps > 0.0)) {
    return;
  }
  const auto load = [&](int ch, double s) { return (ch - ch / view.ranks_per_node) * s; };
  if (load(channels, speed) <= view.intra_gbps + 1e-9) return;
  const int most = channels;
  double best = 0.0;
  for (double s : *caps_of(view.arch).speeds_inter) {
    if (s > speed) continue;
    int ch = most;
    while (ch > 1 && load(ch, s) > view.intra_gbps + 1e-9) --ch;
    if (ch * s > best + 1e-9) {
      best = ch * s;
      channels = ch;
      speed = s;
    }
    if (ch == most) break;  // slower speeds only lose
  }
}
// RCCL's one-node graph for 8 GPUs on a fully connected xGMI mesh is its preset ring set, not a
// search: ROCm/rccl@0cbce2a src/graph/rome_models.cc:549-560, rome_model_79 (8 GPUs, 7 links,
// noCpuCheck and disableNumaMatching: every 8-GPU gfx94x / gfx95x node, whose links RCCL counts
// at one width, GFX94X/GFX95X_XGMI_WIDTH 48 in topo.h), matched by parseA2a8P / parseRome4P2H
// before any search (search.cc:972-979). Its 28 rings (14 distinct, each twice) cross each of
// the 56 directed links exactly 4 times, and parseGraph gives every channel totalBw / nChannels
// (rome_models.cc:1229): together the channels carry the GPU's whole xGMI bandwidth, all 7
// links evenly, with no speed-list remainder. The search's quantum (NCCL's 60 GB/s on Hopper's
// list; RCCL's own AMD list is 48, 24, ..., search.cc:901) left 36 of MI300X's 336 GB/s unused.
// The channel count stays the search's (RCCL launches more: 112 on 8 x gfx950, RCCL 2.26.6's
// CHANGELOG), so a small call keeps the share of the channels it had, of the larger rate.
bool xgmi_mesh_rings(const TopologyView& view) {
  return topo::is_amd(view.arch) && view.nodes == 1 && view.nranks == 8 &&
         view.ranks_per_node == 8 && view.intra_class == LinkClass::nvlink && view.intra_gbps > 0.0;
}
}  // namespace

double nic_delivered_share(const topo::Topology& topology) {
  const topo::TopologyFacts& f = topology.facts();
  const double share = f.nic_delivered_share > 0.0 ? f.nic_delivered_share
                                                   : network_terms(f.network).delivered_fraction;
  // A trend calibrate fitted (`--scale-trend`) moves it to this topology's node count.
  return topo::nic_share_at_nodes(f, topology.node_count(), share);
}

double network_efficiency(const TopologyView& view) {
  return view.nic_gbps > 0.0 ? inter_speed_gbps(view) / view.nic_gbps : 1.0;
}

double nccl_tree_two_node_speed_factor(const TopologyView& view) {
  if (view.nodes != 2 || view.nics_per_node <= 0 || view.nic_gbps <= 0.0) return 1.0;
  const ChannelPlan plan = nccl_channels(view, 0);
  const std::span<const double> speeds(*caps_of(view.arch).speeds_inter);
  const double inter = plan.per_channel_gbps;
  // The list runs from fast to slow: walk up from the inter speed one entry at a time.
  auto it = std::find(speeds.begin(), speeds.end(), inter);
  double intra = inter;
  while (it != speeds.begin() && intra < kNccl.tree_two_node_intra_factor * inter) {
    const double next = *std::prev(it);
    if (plan.channels * next > view.intra_gbps + 1e-9) break;  // no longer fits the NVLink
    intra = next;
    --it;
  }
  return intra / inter;
}

ChannelPlan nccl_channels(const TopologyView& view, int requested_channels) {
  const std::span<const double> speeds(*caps_of(view.arch).speeds_intra);
  double speed = speeds.back();
  for (double s : speeds) {
    if (s <= view.intra_gbps) {
      speed = s;
      break;
    }
  }
  speed = std::min(speed, view.intra_gbps);
  int channels = std::clamp(static_cast<int>(std::floor(view.intra_gbps / speed + 1e-9)), 1,
                            kNccl.max_search_channels);
  if (speed >= kNccl.duplicate_speed_gbps) {
    channels *= 2;
    speed /= 2.0;
  }
  if (view.nodes > 1 && view.nics_per_node > 0 && view.nic_gbps > 0.0) {
    // NCCL's ring search (search.cc ncclTopoSearchRecNet) starts each channel on a network
    // device with the channel's speed left and takes it from it: the node's devices near its
    // GPUs (ncclTopoSelectNets: each GPU's local ones) carry floor(rate / speed) channels each,
    // up to the search's limit (MAXCHANNELS/2: a GB200 NVL72 rack has 72 NICs). 8 GPUs on 16 x
    // 100G devices: 16 channels of 12 GB/s; the same 16 fused into 8 x 200G (IB / RoCE from
    // NCCL 2.20.3): 8 of 24.
    const NcclNets nets = nccl_nets(view);
    const int per_gpu = std::max(
        1, view.nics_per_gpu_by_bw / (nets.count < view.nics_per_node ? view.nic_ports : 1));
    const int near = std::min(nets.count, view.ranks_per_node * per_gpu);
    speed = speed_fitting(view, nets.gbps);
    const int per_device = std::max(1, static_cast<int>(std::floor(nets.gbps / speed + 1e-9)));
    channels = std::clamp(near * per_device, 1, kNccl.max_search_channels);
    fit_channels_to_nvlink(view, channels, speed);
  }
  ChannelPlan plan{channels, speed, channels * speed};
  if (xgmi_mesh_rings(view)) {
    plan.bus_gbps = view.intra_gbps;
    plan.per_channel_gbps = view.intra_gbps / channels;
    speed = plan.per_channel_gbps;
  }
  if (requested_channels > 0) {
    // Forced channels (NCCL_MIN_CTAS / NCCL_MIN_NCHANNELS) share the same NVLinks and NICs: more
    // channels add no bandwidth, so each one gets its share (24 channels on 8 NICs: 384 / 24).
    plan.channels = requested_channels;
    plan.bus_gbps = std::min(plan.bus_gbps, requested_channels * speed);
    plan.per_channel_gbps = std::min(speed, plan.bus_gbps / requested_channels);
  }
  return plan;
}

double nccl_simple_step_bytes(const TopologyView& view) {
  const double buffsize =
      view.nccl_buffsize_bytes > 0.0 ? view.nccl_buffsize_bytes : topo::kNcclDefaultBuffsizeBytes;
  return std::floor(buffsize / kNcclSteps);
}

RingSimpleSlices nccl_ring_simple_slices(const TopologyView& view, double piece_bytes) {
  // prims_simple.h:193-194: sliceSize = max(divUp(nelem, 16 x SlicePerChunk) x 16, stepSize x
  // StepPerSlice / 32); a second slice carries what the first left (elements rounding ignored).
  const double min_slice_bytes = kNcclRingSimpleSliceSteps * nccl_simple_step_bytes(view) / 32.0;
  RingSimpleSlices s;
  s.slices =
      piece_bytes > min_slice_bytes ? kNcclRingSimpleChunkSteps / kNcclRingSimpleSliceSteps : 1.0;
  s.slice_bytes = std::max(0.0, piece_bytes) / s.slices;
  return s;
}

}  // namespace twinccl::sim::detail
