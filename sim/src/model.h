// Internal: what the timing models share: the request with its rank count settled, the topology
// facts the NCCL model reads, and one entry point per model.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "algorithm_traits.h"
#include "host_launch.h"
#include "nccl_tuning_table.h"
#include "twinccl/sim/flow_report.h"
#include "twinccl/sim/timing.h"

namespace twinccl::sim::detail {

// A request after validation: spec.nranks in 1..gpus, the protocol and algorithm decided.
struct Resolved {
  CollectiveSpec spec;
  DataType dtype = DataType::float32;
  std::string algorithm;
  Protocol protocol = Protocol::simple;
  AlgorithmParams params;  // channels 0 = model's choice
  bool software_latency = true;
  RoundCompression compression = RoundCompression::automatic;
  bool aggregate_symmetric_flows = true;
  int nccl_version = 0;  // Request::nccl_version
};

// The topology as the NCCL model sees it, for ranks 0..nranks-1.
struct TopologyView {
  topo::GpuArch arch = topo::GpuArch::unknown;
  int nranks = 1;
  int nodes = 1;           // nodes the ranks span
  int ranks_per_node = 1;  // ranks in the first node
  bool nvls_capable = false;
  LinkClass intra_class = LinkClass::nvlink;
  double intra_gbps = 0.0;  // one GPU's NVLink (or PCIe) bandwidth, one direction
  // One GPU's NVLink as NCCL's topology sees it: its links x NCCL's per-link rate for the arch
  // (graph/topo.h; 18 x 40.1 on Blackwell), whatever a calibrated or edited intra_gbps says; 0
  // when unknown (then intra_gbps). NCCL prices NVLS on this (nvls_all_reduce_efficiency).
  double nccl_nvlink_gbps = 0.0;
  double inter_gbps = 0.0;  // one node's NIC bandwidth (each NIC capped by its PCIe), 0 = none
  int nics_per_node = 0;
  double nic_gbps = 0.0;   // one NIC, capped by its PCIe link
  int nic_ports = 1;       // RDMA devices (NICs above) one card presents (TopologyFacts::nic_ports)
  double pcie_gbps = 0.0;  // one GPU's (and NIC card's) PCIe link, 0 = unknown
  int nvlinks_per_gpu = 0;  // one GPU's NVLinks (TopologySummary), 0 without NVLink
  // The NICs one GPU drives, as NCCL counts them for a network peer's p2p channels
  // (getLocalNetCountByBw): its nearest NICs, one at a time, until their rates reach its PCIe
  // link's; at least 1 with NICs, 0 without.
  int nics_per_gpu_by_bw = 0;
  double memory_gbps = 0.0;  // one GPU's device memory (HBM), 0 = unknown (TopologySummary)
  topo::NetworkClass network = topo::NetworkClass::infiniband;  // network_class.h
  topo::HostCpu host_cpu = topo::HostCpu::x86;                  // nvls_tree_correction.cc
  double network_hop_extra_us = 0.0;  // the topology's fact, added to every network hop
  // The share of the NICs' rate a collective across nodes moves: the topology's fact, else the
  // network class's (network_class.h delivered_fraction); NCCL ranks at the full rate.
  double nic_delivered_share = 1.0;
  double p2p_net_chunk_bytes = 0.0;  // NCCL_P2P_NET_CHUNKSIZE the call runs with, 0 = NCCL's
  double nccl_buffsize_bytes = 0.0;  // NCCL_BUFFSIZE the call runs with, 0 = NCCL's
  // NCCL_VERSION_CODE whose tuning model ranks the algorithms (22602 = 2.26.2); 0 = the newest
  // model (nccl_tuning_table.h). Only the ranking follows it (nccl_version_rank.cc).
  int nccl_version = 0;
};
TopologyView view_of(const topo::Topology& topology, int nranks);
// Whether the view's NCCL predates the release that brought a term (`since_code`, a
// kNcclVersionTerms `*_since`): the one reading of "0 = the newest model" for every term.
inline bool nccl_before(const TopologyView& view, int since_code) {
  return view.nccl_version != 0 && view.nccl_version < since_code;
}
// One step of NCCL's Simple buffer on `view`, bytes: NCCL_BUFFSIZE (the topology's
// nccl_buffsize_bytes, else NCCL's 4 MiB, init.cc DEFAULT_BUFFSIZE) / NCCL_STEPS 8 (device.h),
// rounded down as NCCL divides. The one reading of the run's buffer for the tree/Simple chunk
// (net_window.cc), a ring's slices (ring_slice_sync.cc) and the p2p chunk's cap
// (p2p_net_messages.cc).
double nccl_simple_step_bytes(const TopologyView& view);
// How a Simple ring moves one step's piece (at most a chunk, kNcclRingSimpleChunkSteps steps), the
// one owner for the slice syncs (ring_slice_sync.cc) and the network messages (net_window.cc):
// NVIDIA/nccl v2.28.7-1 (the same in v2.27.7-1) src/device/prims_simple.h:193-194 cuts it into
// SlicePerChunk = 2 slices of max(half the piece, 1/32 of a slice's StepPerSlice = 2 steps: 32 KiB
// at NCCL's 4 MiB buffer), each its own wait, barriers, post and network message taking 2 of the
// NCCL_STEPS slots (:227-292); a piece within one minimum slice fills the first slice alone (the
// second moves nothing, :302-313). `slice_bytes`: the piece's mean non-empty slice.
struct RingSimpleSlices {
  double slices = 1.0;  // non-empty slices: 2, or 1 for a piece within one minimum slice
  double slice_bytes = 0.0;
};
RingSimpleSlices nccl_ring_simple_slices(const TopologyView& view, double piece_bytes);
// The launch figures a prediction on `view` adds (host_launch.h): the topology's, except that in
// one cdna3 node RCCL's base latency holds the per-call launch (0 unless the topology sets one).
// The one reading for predict() and calibrate.
HostLaunch host_launch_for(const topo::Topology& topology, const TopologyView& view);

// The arch's caps as the view's NCCL version has them: Blackwell's tree caps before 2.28.3
// (kNcclVersionTerms); caps_of(arch) otherwise.
ArchCaps caps_of(const TopologyView& view);

// NCCL's double binary tree across `nodes` nodes (graph/trees.cc ncclGetDtree, used by connect.cc
// for the tree channels): the bytes the busiest node sends (and receives) over its NICs for an
// all_reduce of S bytes, in S. Each tree carries S/2; a node moves S/2 to and from its parent and
// each child. 2 from 4 nodes (an inner node of one tree is a leaf of the other: what NCCL's
// tree ratio of 0.5 prices), 1 on 2 nodes, 1.5 on 3 nodes: there both trees are chains
// (0 <- 2 <- 1 and 1 <- 0 <- 2), whose middle nodes carry 1.5 S.
double nccl_dtree_busiest_node_load(int nodes);

// NCCL's constants for the GPUs' architecture (nccl_tuning_table.h): Ampere and Blackwell rows,
// the Hopper row for Hopper, cdna3 (MI300X, RCCL) and unknown [assumed]; RCCL's own terms in one
// cdna3 node come first (analytic_rccl.cc).
inline ArchCaps caps_of(topo::GpuArch arch) {
  switch (arch) {
    case topo::GpuArch::ampere:
      return caps_of(ArchRow::ampere);
    case topo::GpuArch::blackwell:
      return caps_of(ArchRow::blackwell);
    case topo::GpuArch::hopper:
    case topo::GpuArch::cdna3:
    case topo::GpuArch::cdna4:
    case topo::GpuArch::unknown:
      break;
  }
  return caps_of(ArchRow::hopper);
}

// One rank: NCCL runs no collective kernel (enqueue.cc ncclLaunchOneRank): out of place it is a
// cudaMemcpyAsync from the send to the receive buffer (in place nothing; premul_sum a scaling
// kernel, also one read and one write), so the call moves its bytes through device memory twice.
// A streaming copy reaches about 90% of the HBM's rated bandwidth [assumed; public checks: a
// contiguous memcpy at ~1.86 of an H100 PCIe's 2.0 TB/s, hn.aimaker.dev/item/45236545; our H200
// run, all_reduce 512 MiB in 258 us = 2 x 537 MB / 258 us = 0.87 of 4.8 TB/s]. Returns the
// algbw of such a copy (bytes / time), 0 when the memory bandwidth is unknown.
inline constexpr double kDeviceCopyEfficiency = 0.9;
inline double device_copy_algbw_gbps(const TopologyView& v) {
  return v.memory_gbps * kDeviceCopyEfficiency / 2.0;
}

// NCCL's NVLS heads among `local_ranks` GPUs of one NVLink domain: one per GPU, at most
// NCCL_MAX_NVLS_ARITY (kNccl.nvls_max_heads, 32): a GB200 NVL72 rack has 32 heads, not 72.
inline double nvls_heads(double local_ranks) {
  return local_ranks < kNccl.nvls_max_heads ? local_ranks : kNccl.nvls_max_heads;
}

// NVLS all_reduce on one NVLink domain of `local_ranks` GPUs as NCCL prices it: its NVLS graph
// has one channel per head (nvls_heads), and each head's channel reserves its per-channel speed
// on every GPU's NVLink each way, twice on its own GPU (search.cc ncclTopoSearchTryNvls), so the
// speed is the fastest entry of the arch's intra list with (heads + 1) x speed within the NVLink;
// tuning.cc: busBw = heads x speed x efficiency x (heads - 1) / heads x 2, algbw = busBw x n /
// (2 (n - 1)). 72 GPUs of an NVL72 rack: 33 x 20 <= 721.8, 32 x 20 x 0.74 x 31/32 x 2 x 72/142 =
// 465 GB/s; 8 H100s: 9 x 40 <= 370.8, 272 GB/s; 8 B200s: 9 x 80 <= 721.8, 474 GB/s.
// The efficiency is that algbw over NVLink x heads / (heads + 1), the bytes an NVLS all_reduce
// moves through each GPU's NVLink each way, both on NCCL's own view of the NVLink
// (nccl_nvlink_gbps): 0.66 on 72 GPUs of an NVL72 rack, 0.83 on 8 H100s, 0.74 on 8 B200s
// (NCCL's nvlsEfficiency where the list has an entry at NVLink / (heads + 1)). The algbw is the
// topology's NVLink x heads / (heads + 1) x that efficiency, so a calibrated or edited NVLink
// rate moves it in proportion, not by NCCL's speed steps. flow_nvls.cc charges its all_reduce
// flows 1 / efficiency wire bytes per byte.
double nvls_all_reduce_efficiency(const TopologyView& view, double local_ranks);
double nvls_all_reduce_algbw_gbps(const TopologyView& view, double local_ranks);

// NCCL's channel choice and busBw before protocol factors (see nccl_tuning_table.h).
struct ChannelPlan {
  int channels = 1;
  double per_channel_gbps = 0.0;
  double bus_gbps = 0.0;  // channels * per_channel, never above what the automatic choice reaches
};
// Across nodes (NICs present): the channels NCCL's search puts on the network devices near the
// node's GPUs (nccl_nets), floor(device rate / speed) each at NCCL's inter speed, up to 16.
ChannelPlan nccl_channels(const TopologyView& view, int requested_channels);
// The network devices NCCL's search sees on one node: the NICs, or (IB / RoCE from 2.20.3, others
// from 2.24) each card's ports fused into one device at the ports' rate (capped by the card's PCIe
// link).
struct NcclNets {
  int count = 0;
  double gbps = 0.0;
};
NcclNets nccl_nets(const TopologyView& view);
// The channels NCCL launches for a call of `bytes` (enqueue.cc): fewer for small ring/tree calls,
// while bytes < channels x threads x threshold; busBw scaled to the channels kept.
ChannelPlan nccl_launched_channels(const TopologyView& view, ChannelPlan plan, NcclAlgo algo,
                                   Protocol protocol, double bytes);
// NCCL's inter-node speed for one NIC (the arch's inter list entry that fits it) over the NIC's
// bandwidth: the share of a NIC's line rate a channel gets (0.96 for 400 Gb/s). 1 without NICs.
double network_efficiency(const TopologyView& view);
// The share of the NICs' rate a call across nodes moves: the topology's nic_delivered_share, else
// its network class's (network_class.h delivered_fraction: TCPX 0.85, else 1), moved to the
// topology's node count by a trend calibrate fitted (topology.h nic_share_trend_factor). Its one
// owner: TopologyView::nic_delivered_share, the alpha-beta routes and the p2p exchanges read it
// here.
double nic_delivered_share(const topo::Topology& topology);
// NCCL's tree on 2 nodes (search.cc pass 2): its intra speed over the ring's per-channel (NIC)
// speed, raised along the arch's inter list below 2 x the NIC speed while the channels fit the
// GPU's NVLink (aws-p4d-2: 12 -> 24 GB/s, factor 2; 8 x 400G Hopper: 48 is the list's top, 1).
// 1 off 2 nodes or without NICs.
double nccl_tree_two_node_speed_factor(const TopologyView& view);

// NCCL's software latency of one call split as flow charges it: once, per intra-node hop, per
// network hop (tuning.cc: netOverhead floor on intra hops of multi-node rings, tree network
// latency when ppn = 1, the ring plateau factor for Simple all_reduce across nodes).
struct LatencyParts {
  double base_us = 0.0, intra_hop_us = 0.0, net_hop_us = 0.0;
};
// `ranking`: the network hop as NCCL ranks by it (with the net plugin's reported latency,
// network_class.h), not as the call takes it.
LatencyParts nccl_latency_parts(const TopologyView& view, NcclAlgo algo, Protocol protocol,
                                OpKind kind, double bytes, bool ranking = false);
// Bus bandwidth (GB/s) of an NCCL algorithm and protocol before NCCL's busBw -> algbw conversion
// (nvls: already algbw), with every protocol factor and cap of NCCL's model.
double nccl_bus_bandwidth(const TopologyView& view, const ChannelPlan& plan, NcclAlgo algo,
                          Protocol protocol, OpKind kind);

inline std::size_t index_of(Protocol p) { return static_cast<std::size_t>(p); }
// NCCL's log2i: floor(log2(x)) for x >= 1, 0 below.
inline int nccl_log2i(double x) {
  int levels = 0;
  for (; x >= 2.0; x /= 2.0) ++levels;
  return levels;
}

// NCCL's NVLS channels (transport/nvls.cc NVLS_NCHANNELS_*): Hopper 16; Blackwell 32 across
// NVLink domains, in one domain 24 from NCCL 2.27 and 32 before (kNcclVersionTerms). The one
// owner of the count: every NVLS step, fill and grid-stride figure reads it (nvls_steps.cc).
double nccl_nvls_channels(const TopologyView& view);
// NCCL's NVLS heads: one per GPU of a node, across nodes one per NIC (search.cc's NVLS graph), at
// most NCCL_MAX_NVLS_ARITY (nvls_heads).
double nccl_nvls_heads(const TopologyView& view);
// An NVLS / NVLS-tree call's concurrent operations (enqueue.cc's "concurrentOps": NVLS channels x
// heads) and its chunk for `bytes` over them (calcCollChunking), as NCCL runs it.
double nccl_nvls_ops(const TopologyView& view);
double nccl_nvls_chunk_bytes(const TopologyView& view, NcclAlgo algo, double bytes, double ops);
// One NVLS / NVLS-tree call's steps, computed once per call (nccl_nvls_steps) and passed to every
// cost that reads them (the fills, the step syncs, the network window).
struct NvlsSteps {
  double channels = 0.0, heads = 0.0;
  double ops = 0.0;          // channels x heads: enqueue.cc's concurrentOps
  double chunk_bytes = 0.0;  // enqueue.cc's chunk for the call's bytes
  double step_bytes = 0.0;   // one step of every channel and head, at most the call's bytes
  double steps = 1.0;        // K: steps per channel, at least 1
  double exposed = 0.5;      // K/(K+1): the share of a fill the pipeline exposes
};
NvlsSteps nccl_nvls_steps(const TopologyView& view, NcclAlgo algo, double bytes);
// Throws InternalError naming `where` unless `steps` is a call's computed steps (ops and chunk
// above 0): an NvlsSteps{} handed to an NVLS cost would divide by its 0 ops (inf, NaN).
void check_nvls_steps(const NvlsSteps& steps, const char* where);
// The bytes that time an NVLS all_reduce on one node: before NCCL 2.20.3 the channels x the
// busiest channel's bytes (nvls_grid_stride.cc), else `bytes`.
double nvls_busiest_channel_bytes(const TopologyView& view, NcclAlgo algo, OpKind kind,
                                  double bytes);
// The fill and drain of NCCL's NVLS / NVLS-tree all_reduce pipeline (0 otherwise): the steps
// before and after the NVLink stage (kNccl.nvls_fill_steps), each one step of every channel and
// head (`steps`: nccl_nvls_steps for `bytes`), at NCCL's algbw before its Blackwell x86 NVLS-tree
// correction (nvls_tree_algbw_from_bus), K/(K+1) of it for K steps per channel. NCCL's tuning model
// leaves it out; nccl-tests measures it (docs/fidelity.md).
double nvls_pipeline_fill_us(const TopologyView& view, NcclAlgo algo, OpKind kind, double bytes,
                             int requested_channels, const NvlsSteps& steps);
// The synchronisations NVLS all_reduce pays in one NVLink domain for the steps its chunk adds
// over the 128 KiB NCCL prices at (0 otherwise, and 0 on Hopper): kNccl.nvls_step_sync_us_blackwell
// x bytes / (channels x heads) x (1/chunk - 1/128 KiB). 8 B200s, 64 MiB (32 KiB chunks): 8 extra
// steps a channel, 67 us. Not in NCCL's ranking. `steps`: nccl_nvls_steps for `bytes`.
double nvls_step_sync_us(const TopologyView& view, NcclAlgo algo, OpKind kind, double bytes,
                         const NvlsSteps& steps);
// The fill and drain of NCCL's tree all_reduce pipeline (0 otherwise, tree_pipeline_fill.cc): a
// chunk climbs the chain of a node's GPUs and the tree of nodes and comes back down before the
// pipeline runs full: Simple 2 ((ppn - 1) + log2(nodes)) hops of one Simple chunk at the channel's
// rate; LL/LL128 across nodes 2 log2(nodes) network hops of one step (inside a node they forward
// line by line). NCCL's tuning model leaves it out; nccl-tests measures it.
double tree_pipeline_fill_us(const TopologyView& view, NcclAlgo algo, Protocol protocol,
                             OpKind kind, double bytes, const ChannelPlan& plan);
// The synchronisations a Simple ring all_reduce / reduce_scatter / all_gather in one node of
// NVIDIA GPUs pays in every pass beyond the one per step NCCL's latency charges
// (ring_slice_sync.cc; 0 otherwise): each step moves its piece in 2 slices, each waiting one
// NVLink hop (3.4 us): steps x 3.4 us more per loop of nranks chunks. Not in NCCL's ranking.
double ring_slice_sync_us(const TopologyView& view, NcclAlgo algo, Protocol protocol, OpKind kind,
                          double bytes, const ChannelPlan& launched);
// The network fill of an NVLS-tree all_reduce across EFA nodes (nvls_tree_net_fill.cc; 0 on other
// networks and algorithms): one step of every NVLS channel and head (nccl_nvls_ops x
// nccl_nvls_chunk_bytes) on each of the 2 log2(nodes) network hops at the node's NIC line rate,
// the busiest node's share of it, K/(K+1) of it for K steps per channel (`steps`: nccl_nvls_steps
// for `bytes`).
double nvls_tree_net_fill_us(const TopologyView& view, NcclAlgo algo, OpKind kind, double bytes,
                             const NvlsSteps& steps);
// The wait of a tree / NVLS-tree all_reduce across nodes for its network buffer slots
// (net_window.cc; 0 otherwise): NCCL_STEPS = 8 chunks per connection per (slot round trip + one
// chunk's wire time; slot_window_us, the one owner the ring's window shares), charged where longer
// than the call's bandwidth time. Not in NCCL's ranking. `nvls`: the
// NVLS-tree call's steps (nccl_nvls_steps for `bytes`; unread for tree).
double net_window_wait_us(const TopologyView& view, NcclAlgo algo, Protocol protocol, OpKind kind,
                          double bytes, const ChannelPlan& launched, const NvlsSteps& nvls);
// What a ring across nodes waits beyond NCCL's latency + bandwidth time on a network class with a
// slot round trip (aws-ofi-nccl's RDMA protocol, network_class.h; 0 elsewhere and for messages
// within the eager size): NCCL_STEPS messages per (round trip + wire) a connection, the same
// owner's window (net_window.cc slot_window_us).
double ring_net_window_wait_us(const TopologyView& view, NcclAlgo algo, Protocol protocol,
                               OpKind kind, double bytes, const ChannelPlan& launched);
// The wait of an NVLS-tree all_reduce's first network message for the receiver's control message
// on a class with a slot round trip (aws-ofi-nccl's RDMA protocol; net_window.cc; 0 elsewhere, and
// for a first message within the eager size): the round trip less the hop NCCL's latency charges,
// once per call. Not in NCCL's ranking. `nvls`: nccl_nvls_steps for `bytes`.
double nvls_tree_first_message_wait_us(const TopologyView& view, NcclAlgo algo, Protocol protocol,
                                       OpKind kind, double bytes, const NvlsSteps& nvls);
// The one owner of the eager rule: whether a network message of `message_wire_bytes` on
// `network` waits for the receiver's control message before it is written (aws-ofi-nccl's RDMA
// protocol: a class with a slot round trip, above its eager size; net_window.cc). False on every
// other class. Shared by the slot window (net_window.cc) and p2p's first message
// (p2p_net_messages.cc).
bool net_message_waits_for_control(topo::NetworkClass network, double message_wire_bytes);
// A tree all_reduce's chunk (one network message) for `protocol` (enqueue.cc calcCollChunking;
// net_window.cc): LL one LL step's data (32 KiB), LL128 one LL128 step's data (576000 bytes)
// halved for calls too small for (1 + log2(nodes) + 0.1 ppn) x 64 / ppn chunks a channel, Simple
// one Simple step (512 KiB).
double nccl_tree_chunk_bytes(const TopologyView& view, Protocol protocol, double bytes,
                             int channels);
// AWS's region tuner (efa_region_tuner.cc): the algorithm and protocol aws-ofi-nccl's tuner plugin
// gives a call of `bytes` (count x element size: one rank's buffer of an all_gather) at 3+ nodes of
// 8 GPUs, on p5/p5e (the `efa` class: all_reduce), p5en, p6-b200 and p6-b300 (`efa-v3`: all_reduce,
// all_gather, reduce_scatter), or none where NCCL's own ranking stands.
struct RegionChoice {
  const char* algorithm;  // "tree", "ring", "nvls_tree"
  Protocol protocol;
};
std::optional<RegionChoice> efa_region_choice(const TopologyView& view, OpKind kind, double bytes);
// What a call pays beyond NCCL's latency as it runs (the channels enqueue.cc launches for
// `requested_channels`): the NVLS, tree and ring fills and step syncs, the network window's wait,
// the network class's per-call floor across nodes (TCPX): what analytic_nccl and the flow model's
// fixed latency add after the tuner's choice, never in its ranking.
double pipeline_fills_us(const TopologyView& view, NcclAlgo algo, Protocol protocol, OpKind kind,
                         double bytes, int requested_channels);
// An NCCL algorithm's algbw (GB/s) from its busBw (nccl_bus_bandwidth): ring x n / its steps,
// NVLS-tree x n / 2(n-1), tree x NCCL's ratio 0.5 and its correction by size; `call`: as the call
// runs rather than as NCCL ranks it (a tree over 3+ nodes at its busiest node's load). NVLS's busBw
// is already algbw. The one conversion for analytic_nccl and the network window.
double nccl_algbw_gbps(const TopologyView& view, const ChannelPlan& plan, NcclAlgo algo,
                       Protocol protocol, OpKind kind, double bytes, bool call);
// NCCL's NVLS-tree all_reduce algbw from its busBw before any correction by size: busBw x nRanks
// / nsteps, nsteps = 2 (nRanks - 1) (NVIDIA/nccl v2.29.2-1 src/graph/tuning.cc:268,348). The one
// conversion: nccl_algbw_gbps applies NCCL's correction to it, the NVLS fill reads it bare
// (nvls_steps.cc; docs/fidelity.md, "One owner for each NVLS decision").
inline double nvls_tree_algbw_from_bus(double bus_gbps, double nranks) {
  return bus_gbps * nranks / (2.0 * (nranks - 1.0));
}
// The algbw (GB/s) a tree/LL128 all_reduce's kernel reaches on Hopper and Blackwell (+inf else):
// runTreeSplit gives broadcast 30% of a channel's LL128 warps (192 of 640), and [assumed] a warp
// moves what a ring/LL128 warp does (NCCL's ring cap per channel / its 640 threads), so every
// byte, which passes broadcast, flows at channels x 0.3 x the ring/LL128 channel cap (p5: 8 x 0.3
// x 36.7 = 88 GB/s). Only as the call runs: NCCL ranks with its own tree/LL128 cap (docs/
// fidelity.md, "Issue 24, the tree kernel's split").
double tree_ll128_split_algbw_gbps(const TopologyView& view, const ChannelPlan& plan);
// The bus bandwidth (GB/s) a call runs at where it differs from the price NCCL ranks with
// (nccl_bus_bandwidth): across nodes the network class's delivered share of the NIC (TCPX), a
// tree/LL128 all_reduce at most 2 x tree_ll128_split_algbw_gbps. The one reading for the analytic
// call (nccl_algbw_gbps with call) and flow's wire rate (transfer_pricing.cc price_call).
double nccl_call_bus_gbps(const TopologyView& view, const ChannelPlan& plan, NcclAlgo algo,
                          Protocol protocol, OpKind kind);
// NCCL's tree correction factor (bandwidth multiplier) for a tree all_reduce of `bytes`; 1
// otherwise (RCCL's table where it applies, analytic_rccl.cc).
double nccl_tree_correction(const TopologyView& view, Protocol protocol, OpKind kind, double bytes);
// NCCL's correction factor (bandwidth multiplier) for an NVLS-tree all_reduce of `bytes` on
// Blackwell with x86 hosts (the tree's Simple row, from v2.29.2); 1 otherwise, and 1 in the
// ranking (`ranking`) of an NCCL older than 2.29.2 (nvls_tree_correction.cc).
double nccl_nvls_tree_correction(const TopologyView& view, OpKind kind, double bytes, bool ranking);

// RCCL where it differs from NCCL (analytic_rccl.cc, rccl_tuning_table.h): one node of cdna3
// GPUs (and across nodes, the LL latency terms of cdna3 / cdna4). nullopt = RCCL does not choose
// that pair by itself (LL128, tree/Simple in one node) or it is not RCCL's case: NCCL's terms
// apply.
bool rccl_models(const TopologyView& view);
bool rccl_chooses(const TopologyView& view, NcclAlgo algo, Protocol protocol);
std::optional<double> rccl_bus_bandwidth(const TopologyView& view, const ChannelPlan& plan,
                                         NcclAlgo algo, Protocol protocol);
std::optional<LatencyParts> rccl_latency_parts(const TopologyView& view, NcclAlgo algo,
                                               Protocol protocol);
std::optional<double> rccl_tree_correction(const TopologyView& view, Protocol protocol,
                                           double bytes);
// LL128's line where the GPUs are AMD's (RCCL's kernel, rccl_tuning_table.h kRcclLl128): the
// data bytes per wire byte, 56/64 (NVIDIA's 120/128 elsewhere); NCCL's LL128 factors that stand
// for its line (tree x 120/128, ring x 0.92 "120/128", tuning.cc) scaled by ll128_line_ratio =
// RCCL's fraction / NCCL's (14/15 on AMD, 1 elsewhere); the wire bytes per data byte of
// `protocol` (LL 2, LL128 the line's, Simple 1); and an LL128 chunk's data before enqueue.cc's
// halving (RCCL 50176 bytes; nullopt elsewhere: NCCL's 576000, net_window.cc). The per-channel
// LL128 caps stay NCCL's: RCCL's code gives no rate for its kernel (docs/fidelity.md, "RCCL on
// AMD: LL128's line").
double ll128_data_fraction(const TopologyView& view);
double ll128_line_ratio(const TopologyView& view);
double protocol_wire_bytes_per_byte(const TopologyView& view, Protocol protocol);
std::optional<double> rccl_ll128_step_data_bytes(const TopologyView& view);
// RCCL's MSCCL all-pairs all_reduce for this call (8 ranks of one cdna3 node, one process per
// GPU: the caller checks that), its protocol, channels and time (us, kernels only); nullopt
// when RCCL would not run it.
struct MscclCall {
  Protocol protocol = Protocol::simple;
  int channels = 0;
  double time_us = 0.0;
};
std::optional<MscclCall> msccl_allpairs(const TopologyView& view, OpKind kind, std::size_t count,
                                        std::size_t element_bytes, bool in_place);
// NCCL's software latency of one call (base + hops), as the NCCL model charges it.
double nccl_latency_us(const TopologyView& view, NcclAlgo algo, Protocol protocol, OpKind kind,
                       double bytes, bool ranking = false);

// The time an older NCCL's tuning model ranks `algo` by, where its terms differ from the newest
// model's (nccl_version_rank.cc: NVLS-tree before 2.30.3, Blackwell's ring/LL128 before 2.29.7);
// nullopt where they are the same.
std::optional<double> nccl_version_rank_us(const TopologyView& view, const ChannelPlan& plan,
                                           NcclAlgo algo, Protocol protocol, OpKind kind,
                                           double bytes, bool software_latency);

// Each returns time_us, channels and model name; predict() fills the bandwidth columns.
// Channels::launched: the channels enqueue.cc launches for the call (fewer for small ring/tree
// calls), the time the call takes. Channels::all: every channel of the communicator, the time
// NCCL's tuner ranks algorithms by (enqueue.cc chooses first, then drops channels).
enum class Channels { launched, all };
Prediction analytic_nccl(const TopologyView& view, const Resolved& r, NcclAlgo algo,
                         Channels channels = Channels::launched);
// `hops`: the call's software latency (what_if_latency.h; empty without software latency),
// computed once by the caller, which also charges its network hop elsewhere.
struct WhatIfLatency;
Prediction analytic_alpha_beta(const topo::Topology& topology, const TopologyView& view,
                               const Resolved& r, const WhatIfLatency& hops);
FlowReport flow(const topo::Topology& topology, const Resolved& r, const FlowOptions& options);

}  // namespace twinccl::sim::detail
