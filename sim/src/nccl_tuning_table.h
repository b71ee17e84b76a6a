// Internal: every constant of the NCCL-like tuning model, in one table, with its source.
// Sources: shared/reference/nccl-facts.md (read from NVIDIA/nccl v2.30.7 src/graph/tuning.cc and
// search.cc). Entries marked [not in facts] were read from NCCL's tuning.cc/search.cc/enqueue.cc/
// comm.h/device.h (master, 2026) but are not in the facts sheet; [issue N] cites a maintainer's
// statement in NVIDIA/nccl-tests issue N; entries marked [assumed] have no NCCL counterpart.
// Architectures: NCCL's tables have rows for Ampere (SM80), Hopper (SM90) and Blackwell (SM100);
// caps_of() and the speed lists pick the row. cdna3 (AMD MI300X, served by RCCL) and unknown use
// the Hopper rows [assumed] for the channel search and across nodes; in one cdna3 node RCCL's own
// latency and bandwidth terms and its MSCCL all-pairs replace them (rccl_tuning_table.h).
#pragma once

#include <array>
#include <cstddef>

namespace twinccl::sim::detail {

// Index order of the tables below.
enum class NcclAlgo { tree, ring, nvls, nvls_tree, pat };
enum class LinkClass { nvlink, pcie, network };
inline constexpr std::size_t kNcclAlgos = 5;
inline constexpr std::size_t kProtocols = 3;  // LL, LL128, Simple (Protocol's order)

using PerProtocol = std::array<double, kProtocols>;
using PerAlgo = std::array<PerProtocol, kNcclAlgos>;

struct NcclTuningTable {
  // Microseconds once per call, [algo][protocol]. facts: "Base latency".
  PerAlgo base_latency_us;
  // Microseconds per step/hop, [link class][algo][protocol]. facts: "Per-hop latency".
  std::array<PerAlgo, 3> hop_latency_us;
  // LL's bandwidth cap (GB/s) by nodes spanned: 1, 2, more. facts: "LL max bandwidth". NCCL reads
  // the GPU's row in one node only; across nodes the host's (tuning.cc index1): rows Intel-N2/N4
  // and AMD-N2/N4 of llMaxBws [not in facts], 2 nodes and more.
  std::array<double, 3> ll_max_gbps_hopper, ll_max_gbps_ampere;
  std::array<double, 2> ll_max_gbps_other_hosts, ll_max_gbps_amd_hosts;
  // Per-channel caps (GB/s). facts: "Per-channel caps, Hopper".
  double ring_ll128_channel_cap_hopper, ring_ll128_channel_cap_ampere;
  std::array<double, 3> tree_channel_cap_hopper, tree_channel_cap_ampere;  // by nodes 1, 2, more
  std::array<double, 3> tree_ll128_channel_cap_hopper;  // [not in facts] perChMaxTreeLL128Bws
  double tree_ll128_channel_cap_ampere;                 // [not in facts]
  std::array<double, 3> nvls_tree_channel_cap_hopper;   // [not in facts] 1 node: unused (0)
  // Bandwidth factors applied to busBw. facts: "ring LL min(llMax, 0.5*busBw); ring LL128
  // min(0.92*busBw, ...); tree min(0.92*busBw, ...)".
  double ring_ll_factor, ring_ll128_factor, tree_simple_factor;
  double tree_ll_factor;                                     // [not in facts] busBw / 3.8
  double tree_ll128_factor_1node;                            // [not in facts] 7/9
  double tree_ll128_factor_nodes;                            // [not in facts] 120/128
  double pat_factor;                                         // [not in facts] 0.75
  double nvls_efficiency_hopper, nvls_efficiency_blackwell;  // facts: "NVLS efficiency"
  // Blackwell (SM100) rows of the same tables [not in facts] (tuning.cc ncclTunerConstants:
  // llMaxBws 2 x Hopper's, perChMaxRingLL128Bws, perChMaxTreeBws, perChMaxTreeLL128Bws,
  // perChMaxNVLSTreeBws).
  std::array<double, 3> ll_max_gbps_blackwell;
  double ring_ll128_channel_cap_blackwell;
  std::array<double, 3> tree_channel_cap_blackwell, tree_ll128_channel_cap_blackwell;
  std::array<double, 3> nvls_tree_channel_cap_blackwell;
  // Bytes on the wire per data byte. facts: "Protocols" (LL 16/8, LL128 128/120, Simple 1).
  PerProtocol wire_bytes_per_byte;
  // Channel search (search.cc, paraphrased): the highest per-channel speed (GB/s) of the arch's
  // list that fits the GPU's NVLink/PCIe bandwidth, as many channels as fit (<=
  // max_search_channels), then channels doubled and speed halved when the speed is >=
  // duplicate_speed_gbps.
  std::array<double, 11> speeds_hopper;     // [not in facts] sm90 intra speed array
  std::array<double, 11> speeds_ampere;     // [not in facts] sm80 intra speed array (first 11)
  std::array<double, 11> speeds_blackwell;  // [not in facts] sm100SpeedArrayIntra
  int max_search_channels;                  // [not in facts] MAXCHANNELS/2
  double duplicate_speed_gbps;              // [not in facts] channels duplicated at >= 25 GB/s
  // Across nodes: one channel per NIC (NCCL's search gives each channel a NIC), at the highest
  // speed of the arch's inter list that fits one NIC (capped by its PCIe link): 48 GB/s for a
  // 400 Gb/s NIC, which is NVIDIA's "46-48 GB/s per NIC" [issue 290]; 24 for a 200 Gb/s NIC.
  std::array<double, 12> speeds_inter_hopper;     // [not in facts] sm90SpeedArrayInter (first 12)
  std::array<double, 12> speeds_inter_ampere;     // [not in facts] speedArrayInter (first 12)
  std::array<double, 12> speeds_inter_blackwell;  // [not in facts] sm100SpeedArrayInter (first 12)
  // Trees on 2 nodes (search.cc pass 2, "increase bwIntra for trees (2 nodes or collnet)", the same
  // in v2.9.9-1 and v2.30.7-1): the tree graph's intra speed is raised one entry of the arch's
  // inter list at a time while it is below this factor x its inter speed and the channels still fit
  // the GPU's NVLink, and tuning.cc prices every algorithm at nNodes <= 2 by the intra speed. A
  // 2-node tree crosses the network with S per node each way (a ring 2(n-1)/n S), so 2 x the NICs'
  // speed is the tree's own network bound, not a guess. [not in facts]
  double tree_two_node_intra_factor;  // 2
  // Multi-node rings: every step also posts a network operation (tuning.cc getNetOverhead,
  // NVIDIA/nccl v2.27.7-1 :204-209; RCCL's the same): intra-node hops cost at least this, x3 for
  // Simple. 1 us on Intel x86 and every other host, 2 us on AMD x86 (TopologyView::host_cpu).
  double net_overhead_us;             // [not in facts] 1
  double net_overhead_amd_us;         // [not in facts] 2
  double net_overhead_simple_factor;  // [not in facts] 3
  // Ring Simple all_reduce across nodes: latency x1.4 on sm80+ ("plateau effect of ring").
  double ring_plateau_factor;  // [not in facts] 1.4 (1.9 before sm80)
  // Tree all_reduce bandwidth x factor[protocol][log2(bytes/64)] for 64 B..256 MiB
  // (tuning.cc treeCorrectionFactor, "trees are not perfectly sticking to the model"); from
  // v2.29.2-1 a 24th entry (512 MiB) for NVLS-tree on Blackwell x86 (nvls_tree_correction.cc).
  std::array<std::array<double, 24>, kProtocols> tree_correction;  // [not in facts]
  // Channels actually launched (enqueue.cc): ring/tree drop channels while
  // bytes < channels x threads x threshold; threads LL 512, LL128 640, Simple 512 (comm.h,
  // device.h); thresholds LL 8 (x nranks for ring), LL128 8, Simple 64 bytes per thread.
  PerProtocol max_threads;             // [not in facts]
  PerProtocol thread_threshold_bytes;  // [not in facts]
  // NVLS all_reduce moves n+1 slices of S/n through each GPU's NVLink each way (multimem
  // ld_reduce then st; the maintainer's "algbw = busbw x n/(n+1)" [issue 212]; n = the heads,
  // nvls_max_heads below), at the rate NCCL prices it: each head's channel at the fastest speed of
  // the arch's intra list with (heads + 1) x speed within the NVLink (search.cc
  // ncclTopoSearchTryNvls), busBw = heads x speed x efficiency x (heads - 1)/heads x 2 (tuning.cc;
  // model.h nvls_all_reduce_algbw_gbps). reduce_scatter/all_gather: S up / S/n down (or the
  // reverse): algbw (nccl-tests bytes) = NVLink x efficiency. NVLS/NVLS-tree all_reduce pipeline
  // (nvls_pipeline_fill_us, nvls_steps.cc): NCCL's NVLS channels (transport/nvls.cc
  // NVLS_NCHANNELS_SM90 16, SM100 24 in a node / 32 across nodes), its chunk (NCCL_NVLS_CHUNKSIZE
  // 128 KiB; NVLS-tree at most 64 KiB from 4 nodes, NCCL_NVLSTREE_MAX_CHUNKSIZE), halved for
  // smaller calls by enqueue.cc calcCollChunking.
  double nvls_channels_hopper;                                          // [not in facts] 16
  double nvls_channels_blackwell_1node, nvls_channels_blackwell_nodes;  // [not in facts] 24, 32
  double nvls_chunk_bytes;                                              // [not in facts] 128 KiB
  double nvls_tree_chunk_bytes_4nodes;                                  // [not in facts] 64 KiB
  // Pipeline steps that fill and drain around the NVLink stage: device/all_reduce.h runNvls splits
  // a channel's warps into scatter (send buffer -> NVLS buffer), reduce/multicast and gather
  // (NVLS buffer -> receive buffer) groups, each working on one step of nHeads chunks [assumed:
  // the scatter and gather copies, at the call's rate; nccl-tests does not register its buffers,
  // which is when NCCL skips them]. With K steps per channel (bytes / (channels x heads x chunk),
  // at least 1) K/(K+1) of the fill is exposed [assumed: one rule, not fitted per row; the xe9680
  // 2-node rows at one 64 KiB chunk show 27 / 45 / 60 us at K = 1 / 2 / 4, docs/fidelity.md].
  double nvls_fill_steps;  // [assumed] 2
  // One NVLink domain, Blackwell: each NVLS step of a channel pays one synchronisation (the reduce
  // warps wait for every rank's scatter of the step, the gather for the reduce: one thread polls
  // each peer, in parallel, v2.28.7-1 src/device/prims_simple.h:109-130,599-622). NCCL's price is
  // measured at its 128 KiB chunk, so a call pays the steps its smaller chunk adds (enqueue.cc
  // calcCollChunking, v2.28.7-1 :2045-2054: 64 / 32 / 16 KiB by bytes vs channels x heads):
  // bytes / (channels x heads) x (1/chunk - 1/128 KiB) steps (nvls_step_sync_us, nvls_steps.cc).
  // [fitted] 8.4 us, least squares on the OCI GB300 2-tray log's four rows with a chunk under 128
  // KiB (oci-quickstarts@61eba7f, 8 MiB - 1 GiB) only; judged on the 8-B200, 64-GB300 and
  // 72-GB200 rows (docs/fidelity.md, "The mid-size ramp in one NVLink domain"). Hopper: 0 (its
  // rows imply -3..+3 us a step, within their bands without it).
  // Blackwell only is NOT NCCL's: the step's wait (v2.28.7-1 src/device/prims_simple.h:95-130,
  // one path for sm_90 and up) and the chunk choice (src/enqueue.cc:2041-2054) do not look at the
  // arch; NCCL's one per-arch NVLS term, the channel count (src/transport/nvls.cc:148-200), is
  // already in channels x heads. Taken to Hopper with 8.4 unchanged it is worse: nvswitch-1node
  // large 38/45 -> 34/45, middle 20/26 -> 18/26, 27 of 31 H100/H200 NVLS rows further (mean
  // |error| 5.2% -> 13.9%), 10 outside their band. So this is a fitted Blackwell term whose
  // mechanism does not carry to Hopper: the restriction follows the rows, not NCCL's code
  // (docs/fidelity.md, "Three restrictions audited").
  double nvls_step_sync_us_blackwell;  // [fitted] 8.4
  // NVLS heads: one per NVLS graph channel, at most NCCL_MAX_NVLS_ARITY (device.h) = 32; search.cc
  // caps the NVLS graph at min(32, GPUs), so a 72-GPU NVLink domain has 32 heads, and the
  // all_reduce moves S (1 + 1/heads) through each GPU's NVLink, not S (1 + 1/n).
  double nvls_max_heads;  // [not in facts] 32
  // Send/recv channels in one node (p2p_channels.cc; NVIDIA/nccl v2.29.3-1, read): the p2p chunk
  // (src/init.cc NCCL_P2P_NVL_CHUNKSIZE 512 KiB when every path is NVLink, NCCL_P2P_PCI_CHUNKSIZE
  // 128 KiB else), a send's parts between chunk / 8 and chunk x 32 in one node (src/enqueue.cc
  // addP2pToPlan minPartSize / maxPartSize), 2 channels a peer per NVLink between the two GPUs
  // (src/graph/paths.cc ncclTopoGetNchannels), MAXCHANNELS (src/include/device.h; 32 before 2.25:
  // kNcclVersionTerms) over the communicator's channels, twice its graph's (src/graph/connect.cc
  // ncclTopoPostset).
  double p2p_nvl_chunk_bytes;     // [not in facts] 524288
  double p2p_pci_chunk_bytes;     // [not in facts] 131072
  double p2p_min_part_per_chunk;  // [not in facts] 1/8
  double p2p_max_part_per_chunk;  // [not in facts] 32
  int p2p_channels_per_nvlink;    // [not in facts] 2
  int p2p_pci_peer_channels;      // [not in facts] 2 (a peer in the node without NVLink)
  // A network peer's channels (src/graph/paths.cc ncclTopoGetNchannels, v2.20.3+): 2, halved while
  // they x the ranks exceed this many x the p2p channels.
  int p2p_net_peer_channels;       // [not in facts] 2
  int p2p_net_peer_ranks_per_p2p;  // [not in facts] 4
  // The communicator's channels across nodes double again below this many where a ring channel is
  // faster than this (src/graph/connect.cc "4 compute channels per search channel").
  int compute_channels_below;          // [not in facts] 16
  double compute_channels_above_gbps;  // [not in facts] 45
  int max_channels;                    // [not in facts] 64
};

inline constexpr NcclTuningTable kNccl{
    .base_latency_us = {{{6.8, 14.0, 8.4},   // tree
                         {6.6, 14.0, 8.4},   // ring
                         {0.0, 0.0, 0.0},    // nvls
                         {0.0, 0.0, 0.0},    // nvls_tree
                         {8.0, 8.0, 8.0}}},  // pat
    .hop_latency_us = {{
        {{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0.0, 0.0, 25.0}, {0.0, 0.0, 25.0}, {0.0, 0.0, 4.0}}},
        // PCIe: nvls/pat entries [assumed] equal to NVLink's (NVLS needs NVLink; PAT not given).
        {{{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0.0, 0.0, 25.0}, {0.0, 0.0, 25.0}, {0.0, 0.0, 4.0}}},
        {{{5.0, 8.5, 14.0},
          {2.7, 4.0, 14.0},
          {0.0, 0.0, 18.0},
          {0.0, 0.0, 20.9},
          {0.0, 0.0, 14.0}}},
    }},
    .ll_max_gbps_hopper = {141.0, 45.0, 35.0},
    .ll_max_gbps_ampere = {87.7, 22.5, 19.0},
    .ll_max_gbps_other_hosts = {39.0, 20.4},
    .ll_max_gbps_amd_hosts = {22.5, 19.0},
    .ring_ll128_channel_cap_hopper = 36.7,
    .ring_ll128_channel_cap_ampere = 20.0,  // [not in facts]
    .tree_channel_cap_hopper = {38.7, 41.4, 36.0},
    .tree_channel_cap_ampere = {24.0, 23.6, 17.8},  // [not in facts]
    .tree_ll128_channel_cap_hopper = {36.7, 36.7, 29.0},
    .tree_ll128_channel_cap_ampere = 20.0,
    .nvls_tree_channel_cap_hopper = {0.0, 57.7, 45.5},
    .ring_ll_factor = 0.5,
    .ring_ll128_factor = 0.92,
    .tree_simple_factor = 0.92,
    .tree_ll_factor = 1.0 / 3.8,
    .tree_ll128_factor_1node = 7.0 / 9.0,
    .tree_ll128_factor_nodes = 120.0 / 128.0,
    .pat_factor = 0.75,
    .nvls_efficiency_hopper = 0.85,
    .nvls_efficiency_blackwell = 0.74,
    .ll_max_gbps_blackwell = {2 * 141.0, 2 * 45.0, 2 * 35.0},
    .ring_ll128_channel_cap_blackwell = 40.0,
    .tree_channel_cap_blackwell = {70.0, 42.8, 24.0},
    .tree_ll128_channel_cap_blackwell = {55.6, 31.67, 20.0},
    .nvls_tree_channel_cap_blackwell = {0.0, 96.0, 80.0},
    .wire_bytes_per_byte = {16.0 / 8.0, 128.0 / 120.0, 1.0},
    .speeds_hopper = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0},
    .speeds_ampere = {40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0},
    .speeds_blackwell = {90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0},
    .max_search_channels = 16,
    .duplicate_speed_gbps = 25.0,
    .speeds_inter_hopper = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0},
    .speeds_inter_ampere = {48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0},
    .speeds_inter_blackwell = {96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0,
                               12.0},
    .tree_two_node_intra_factor = 2.0,
    .net_overhead_us = 1.0,
    .net_overhead_amd_us = 2.0,
    .net_overhead_simple_factor = 3.0,
    .ring_plateau_factor = 1.4,
    .tree_correction = {{
        {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
         .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
        {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
         .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
        {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
         .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
    }},
    .max_threads = {512.0, 640.0, 512.0},
    .thread_threshold_bytes = {8.0, 8.0, 64.0},
    .nvls_channels_hopper = 16.0,
    .nvls_channels_blackwell_1node = 24.0,
    .nvls_channels_blackwell_nodes = 32.0,
    .nvls_chunk_bytes = 128.0 * 1024.0,
    .nvls_tree_chunk_bytes_4nodes = 64.0 * 1024.0,
    .nvls_fill_steps = 2.0,
    .nvls_step_sync_us_blackwell = 8.4,
    .nvls_max_heads = 32.0,
    .p2p_nvl_chunk_bytes = 524288,
    .p2p_pci_chunk_bytes = 131072,
    .p2p_min_part_per_chunk = 1.0 / 8.0,
    .p2p_max_part_per_chunk = 32,
    .p2p_channels_per_nvlink = 2,
    .p2p_pci_peer_channels = 2,
    .p2p_net_peer_channels = 2,
    .p2p_net_peer_ranks_per_p2p = 4,
    .compute_channels_below = 16,
    .compute_channels_above_gbps = 45.0,
    .max_channels = 64,
};

// NCCL's buffer steps, the one owner for every step model (net_window.cc, ring_slice_sync.cc,
// topology_view.cc): NCCL_STEPS = 8 slots a connection (NVIDIA/nccl v2.28.7-1
// src/include/device.h:24; v2.27.7-1 :25); a ring's Simple chunk ALLREDUCE_/ALLGATHER_/
// REDUCESCATTER_CHUNKSTEPS = NCCL_STEPS/2 = 4 buffer steps and slice *_SLICESTEPS = NCCL_STEPS/4
// = 2 (src/include/collectives.h:17-24; v2.27.7-1 :17-22).
inline constexpr double kNcclSteps = 8.0;
inline constexpr double kNcclRingSimpleChunkSteps = kNcclSteps / 2.0;
inline constexpr double kNcclRingSimpleSliceSteps = kNcclSteps / 4.0;

// NCCL_VERSION_CODE (major x 10000 + minor x 100 + patch from 2.9; 22602 = 2.26.2) accepted for a
// Request's / Tuner's nccl_version (0 = the newest model, kNccl above).
inline constexpr int kNcclVersionCodeMin = 20900, kNcclVersionCodeMax = 99999;

// Where an older NCCL's tuning model ranks with other terms than kNccl's (nccl_version_rank.cc),
// read from NVIDIA/nccl's tags (git show <tag>:src/graph/tuning.cc, search.cc):
// * NVLS-tree bandwidth before 2.28.0 (v2.26.2-1 tuning.cc:252 `bw = min(bwIntra, nNodes <= 2 ?
//   bwInter : bwInter/2)`, :293 `ratio *= 5.0/6.0` for NVLS and NVLS-tree; the same in v2.27.7-1;
//   v2.28.3-1 brings nvlsEfficiency, perChMaxNVLSTreeBws and nRanks/nsteps, kNccl's terms);
// * NVLS-tree network hop latency 14 us before 2.28.9 (v2.26.2-1 tuning.cc:141, v2.28.7-1; 20.9
//   from v2.28.9-1).
// * Blackwell's NVLS-tree per-channel cap from 3 nodes before 2.30.3 (perChMaxNVLSTreeBws N4:
//   v2.28.3-1 / v2.28.7-1 tuning.cc 43.1, v2.28.9-1 to v2.29.7-1 :198 43.8; v2.30.3-1, the first
//   2.30 tag, to v2.30.7-1 80.0, kNccl's). NCCL's estimate only: ranking, not the call's time
//   (the kernel did not change; a 2.28.9 run's NVLS-tree at 4 - 64 nodes is priced within 2% with
//   the newest cap, ib-multinode.csv flapping-airplanes).
// * Blackwell's ring/LL128 per-channel cap before 2.29.7 (perChMaxRingLL128Bws: 2 x 36.7 at every
//   node count to v2.28.3-1, {2 x 36.7, 34.6, 2 x 36.7} in v2.28.7-1 / v2.28.9-1, {34.5, 34.6,
//   34.5} in v2.29.2-1 / v2.29.3-1, 40.0 from v2.29.7-1, kNccl's). Ranking only, as above.
// * Blackwell's per-channel tree caps before 2.28.3 (v2.27.3-1 tuning.cc:178-189: perChMaxTreeBws
//   {2 x 38.7, 2 x 41.4, 2 x 36.0}, perChMaxTreeLL128Bws {2 x 36.7, 2 x 36.7, 2 x 29.0}; v2.28.3-1
//   :181-191 brings kNccl's {70, 42.8, 24} and {55.6, 31.67, 20}). Unlike the NVLS-tree terms they
//   enter the call's time too (tree_bus, analytic_nccl.cc), as the newest caps do.
// * Blackwell's NVLS channels in one NVLink domain before 2.27.0: NVLS_NCHANNELS_SM100 = 32
//   whatever the domain (v2.25.1-1 / v2.26.6-1 src/transport/nvls.cc:145,176); v2.27.3-1 :149,193
//   brings NVLS_NCHANNELS_SM100_NVL = 24 for one NVLink domain (kNccl's). Like the tree caps they
//   enter the call's time (the NVLS steps, nvls_steps.cc nccl_nvls_ops), not the ranking.
// * NVLS on one node spread evenly over its channels from 2.20.3 (v2.20.3-1 src/enqueue.cc
//   addCBDCollToPlan; v2.19.4-1 has none): before, its busiest channel times the call
//   (nvls_grid_stride.cc).
// * The tree correction on Blackwell x86 NVLS-tree from 2.29.2 (v2.29.2-1 tuning.cc:595): in the
//   call's time for every version, in the ranking from that one (nvls_tree_correction.cc).
// * NVLS's chunk from NCCL_NVLS_CHUNKSIZE from 2.21 (v2.21.5-1, its first release: enqueue.cc:1743
//   `maxChunkSize = comm->nvlsChunkSize`, set from the variable at src/transport/nvls.cc:233,310;
//   the same in every tag to v2.30.7-1 :2263); before, 128 KiB whatever the environment (v2.18.1-1
//   :1341, v2.20.3-1 :1704 `int maxChunkSize = 131072`). The call's time, not the ranking (the
//   tuning model has no chunk term): nvls_steps.cc nccl_nvls_chunk_bytes.
// * A communicator's p2p channels across nodes (p2p_channels.cc): a network peer's NCCL_NCHANNELS_
//   PER_NET_PEER is 1 before 2.12 (v2.11.4-1 src/graph/paths.cc ncclTopoGetNchannels), 2 from
//   2.12.7 (v2.12.7-1 :609), and from 2.20.3 2 halved while it times the ranks exceeds 4 x the p2p
//   channels, at least the NICs the GPU drives by bandwidth (v2.20.3-1 :713-727); Blackwell's
//   communicator doubles its channels across nodes below 16 from 2.25.1 as Hopper's always did
//   (src/graph/connect.cc "4 compute channels per search channel": `minCompCap == 90` in
//   v2.24.3-1, `>= 90` in v2.25.1-1).
// * A send/recv's channels (p2p_channels.cc): before 2.20.3 a one-node communicator capped them at
//   4 x its p2p channels / ranks (v2.19.4-1 src/enqueue.cc scheduleP2pTasksToPlan, `nNodes == 1`;
//   v2.20.3-1 has none); from 2.22.3 a send starts on no more parts than its bytes fill at chunk /
//   8 each (v2.22.3-1 addP2pToPlan `std::min<int>(nChannelsMin, divUp(bytes, minPartSize))`;
//   v2.21.5-1 starts on nChannelsMin); MAXCHANNELS 64 from 2.25.1 (src/include/device.h; 32 in
//   v2.24.3-1), which bounds the communicator's channels. The call's time only: NCCL prices no
//   send/recv.
// * A NIC card's ports fused into one network device: by NCCL's own IB/RoCE transport from 2.20.3
//   (v2.20.3-1 src/transport/net_ib.cc ncclIbMergedDevs, NCCL_IB_MERGE_NICS default 1: devices on
//   one PCI device with one sys_image_guid become one of their summed speed; v2.19.4-1 has no
//   merge), and for every network from 2.24.3 (v2.24.3-1 src/graph/topo.cc ncclTopoMakeVNics /
//   ncclTopoAutoMerge at NCCL_NET_MERGE_LEVEL's default PATH_PORT, for a net that makes virtual
//   devices): a card of 2 x 100G runs as one 200G device (topology_view.cc nccl_nets). The
//   search's channels and speeds, hence the ranking and the call's time.
struct NcclVersionTerms {
  int nvls_tree_formula_since;                   // 22800
  int nvls_tree_net_hop_since;                   // 22809
  int nvls_tree_correction_since;                // 22902 (nvls_tree_correction.cc)
  double nvls_tree_algbw_per_busbw_before_2_28;  // 5/6
  double nvls_tree_net_hop_us_before_2_28_9;     // 14
  int blackwell_tree_caps_since;                 // 22803
  std::array<double, 3> tree_channel_cap_blackwell_before_2_28_3;
  std::array<double, 3> tree_ll128_channel_cap_blackwell_before_2_28_3;
  int blackwell_nvls_domain_channels_since;                     // 22700
  double nvls_channels_blackwell_1node_before_2_27;             // 32
  int nvls_one_node_even_split_since;                           // 22003
  int nvls_chunk_env_since;                                     // 22100
  int blackwell_nvls_tree_cap_since;                            // 23003
  double nvls_tree_channel_cap_blackwell_3nodes_before_2_28_9;  // 43.1
  double nvls_tree_channel_cap_blackwell_3nodes_before_2_30_3;  // 43.8
  int blackwell_ring_ll128_cap_2_28_7_since;                    // 22807
  int blackwell_ring_ll128_cap_2_29_since;                      // 22902
  int blackwell_ring_ll128_cap_since;                           // 22907
  std::array<double, 3> ring_ll128_channel_cap_blackwell_before_2_28_7;
  std::array<double, 3> ring_ll128_channel_cap_blackwell_before_2_29;
  std::array<double, 3> ring_ll128_channel_cap_blackwell_before_2_29_7;
  int p2p_channels_uncapped_since;       // 22003
  int p2p_channels_by_parts_since;       // 22203
  int max_channels_64_since;             // 22501
  int max_channels_before_2_25;          // 32
  int p2p_net_peer_two_channels_since;   // 21207
  int p2p_net_peer_by_scale_since;       // 22003
  int compute_channels_blackwell_since;  // 22501
  int nic_fusion_since;                  // 22403
  int ib_merge_nics_since;               // 22003

  // Every `*_since` above: the one list the newest model's version folds over. It binds all the
  // members by position, so a new member does not compile until it is placed here (its `since`
  // in the list, any other term ignored).
  constexpr std::array<int, 19> since_codes() const {
    const auto& [formula, net_hop, correction, algbw_ratio, net_hop_us, tree_caps, tree_cap,
                 tree_ll128_cap, domain_channels, channels_1node, even_split, nvls_chunk_env,
                 nvls_tree_cap, nvls_tree_cap_2_28, nvls_tree_cap_2_29, ll128_2_28_7, ll128_2_29,
                 ll128_cap, ll128_cap_2_28, ll128_cap_2_28_7, ll128_cap_2_29, p2p_uncapped,
                 p2p_by_parts, max_channels_64, max_channels_32, net_peer_two, net_peer_by_scale,
                 compute_channels_blackwell, nic_fusion, ib_merge_nics] = *this;
    (void)algbw_ratio, (void)net_hop_us, (void)tree_cap, (void)tree_ll128_cap, (void)channels_1node;
    (void)nvls_tree_cap_2_28, (void)nvls_tree_cap_2_29, (void)ll128_cap_2_28,
        (void)ll128_cap_2_28_7, (void)ll128_cap_2_29, (void)max_channels_32;
    return {formula,
            net_hop,
            correction,
            tree_caps,
            domain_channels,
            even_split,
            nvls_chunk_env,
            nvls_tree_cap,
            ll128_2_28_7,
            ll128_2_29,
            ll128_cap,
            p2p_uncapped,
            p2p_by_parts,
            max_channels_64,
            net_peer_two,
            net_peer_by_scale,
            compute_channels_blackwell,
            nic_fusion,
            ib_merge_nics};
  }
  // The oldest NCCL whose ranking and call times are the newest model's: the last `since`.
  constexpr int newest_model_since() const {
    int newest = 0;
    for (const int since : since_codes()) newest = since > newest ? since : newest;
    return newest;
  }
};
inline constexpr NcclVersionTerms kNcclVersionTerms{
    .nvls_tree_formula_since = 22800,
    .nvls_tree_net_hop_since = 22809,
    .nvls_tree_correction_since = 22902,
    .nvls_tree_algbw_per_busbw_before_2_28 = 5.0 / 6.0,
    .nvls_tree_net_hop_us_before_2_28_9 = 14.0,
    .blackwell_tree_caps_since = 22803,
    .tree_channel_cap_blackwell_before_2_28_3 = {2 * 38.7, 2 * 41.4, 2 * 36.0},
    .tree_ll128_channel_cap_blackwell_before_2_28_3 = {2 * 36.7, 2 * 36.7, 2 * 29.0},
    .blackwell_nvls_domain_channels_since = 22700,
    .nvls_channels_blackwell_1node_before_2_27 = 32.0,
    .nvls_one_node_even_split_since = 22003,
    .nvls_chunk_env_since = 22100,
    .blackwell_nvls_tree_cap_since = 23003,
    .nvls_tree_channel_cap_blackwell_3nodes_before_2_28_9 = 43.1,
    .nvls_tree_channel_cap_blackwell_3nodes_before_2_30_3 = 43.8,
    .blackwell_ring_ll128_cap_2_28_7_since = 22807,
    .blackwell_ring_ll128_cap_2_29_since = 22902,
    .blackwell_ring_ll128_cap_since = 22907,
    .ring_ll128_channel_cap_blackwell_before_2_28_7 = {2 * 36.7, 2 * 36.7, 2 * 36.7},
    .ring_ll128_channel_cap_blackwell_before_2_29 = {2 * 36.7, 34.6, 2 * 36.7},
    .ring_ll128_channel_cap_blackwell_before_2_29_7 = {34.5, 34.6, 34.5},
    .p2p_channels_uncapped_since = 22003,
    .p2p_channels_by_parts_since = 22203,
    .max_channels_64_since = 22501,
    .max_channels_before_2_25 = 32,
    .p2p_net_peer_two_channels_since = 21207,
    .p2p_net_peer_by_scale_since = 22003,
    .compute_channels_blackwell_since = 22501,
    .nic_fusion_since = 22403,
    .ib_merge_nics_since = 22003,
};

// One architecture's row of the per-arch caps and speed lists above.
struct ArchCaps {
  std::array<double, 3> ll_max_gbps;  // by nodes 1, 2, more
  double ring_ll128_channel_gbps;
  std::array<double, 3> tree_channel_gbps, tree_ll128_channel_gbps, nvls_tree_channel_gbps;
  const std::array<double, 11>* speeds_intra;
  const std::array<double, 12>* speeds_inter;
  double nvls_efficiency;
};
enum class ArchRow { ampere, hopper, blackwell };  // NCCL's compCapIndex
inline constexpr ArchCaps caps_of(ArchRow row) {
  const NcclTuningTable& t = kNccl;
  switch (row) {
    case ArchRow::ampere: {
      const double ll128 = t.tree_ll128_channel_cap_ampere;
      // No NVLS on Ampere (NCCL's 0.0); Hopper's NVLS figures keep a file that claims it finite.
      return {t.ll_max_gbps_ampere,   t.ring_ll128_channel_cap_ampere, t.tree_channel_cap_ampere,
              {ll128, ll128, ll128},  t.nvls_tree_channel_cap_hopper,  &t.speeds_ampere,
              &t.speeds_inter_ampere, t.nvls_efficiency_hopper};
    }
    case ArchRow::blackwell:
      return {t.ll_max_gbps_blackwell,           t.ring_ll128_channel_cap_blackwell,
              t.tree_channel_cap_blackwell,      t.tree_ll128_channel_cap_blackwell,
              t.nvls_tree_channel_cap_blackwell, &t.speeds_blackwell,
              &t.speeds_inter_blackwell,         t.nvls_efficiency_blackwell};
    case ArchRow::hopper:
      break;
  }
  return {t.ll_max_gbps_hopper,           t.ring_ll128_channel_cap_hopper,
          t.tree_channel_cap_hopper,      t.tree_ll128_channel_cap_hopper,
          t.nvls_tree_channel_cap_hopper, &t.speeds_hopper,
          &t.speeds_inter_hopper,         t.nvls_efficiency_hopper};
}

inline constexpr double at(const PerAlgo& table, NcclAlgo algo, std::size_t protocol) {
  return table[static_cast<std::size_t>(algo)][protocol];
}

}  // namespace twinccl::sim::detail
