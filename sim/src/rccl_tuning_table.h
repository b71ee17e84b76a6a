// Internal: RCCL's own tuning constants for AMD Instinct MI300X / MI325X (gfx942, GpuArch::cdna3)
// in one node, and the MSCCL all-pairs all_reduce RCCL runs there before its tuner. Read (not
// copied) from ROCm/rccl at 0cbce2a7571c907554199fad7e905f16ec0a565c (2024-10, RCCL 2.21/2.22,
// ROCm 6.3; the figures judged with it are RCCL 2.22.3), file:line below.
//
// Where RCCL's model differs from NCCL's (src/graph/tuning.cc, the __HIP_PLATFORM_AMD__ branches):
//   * base latency 12 / 12 / 17 us (LL / LL128 / Simple) for tree and ring (:57-60; NCCL 6.6 / 14 /
//     8.4), hop latencies from one of six "tuning models" (:74-261), picked per machine by the
//     rome model its topology matches (src/graph/rome_models.cc): every 8 x MI300X model (79, 81,
//     84) says tuning=5; one node matches model 79 (NICs are trimmed in one node), which also sets
//     mscclEnabled=1 (rome_models.cc:559);
//   * busBw x bwRatio[nodes <= 2 ? 0 : 1][algo][proto] (:376-381) instead of NCCL's LL / LL128 /
//     tree factors and per-channel caps (those are in the #else branch, :383-388): ring LL keeps
//     8% of the channels' bandwidth, tree LL 6%; ratio 0 (LL128 under model 5) = not available;
//   * tree/Simple is skipped on one gfx94 node (:365);
//   * LL128 runs by default only on gfx90a (:509-515); gfx942 needs RCCL_LL128_FORCE_ENABLE;
//   * ncclTopoGetAlgoTime (:648-658): tree bandwidth x the tuning model's treeCorrectionFactor
//     [proto][min(log2(bytes / 64), 26)]; no launched-channel scaling, no ring plateau (NCCL-only,
//     the #else branch).
// Across nodes the tuning model is the one whose rome model the node's GPU + NIC layout matches
// (model 81: 8 NICs at 8 given PCI positions), else model 0; which one a cloud's node matches
// cannot be told from outside. The models disagree on Simple (ring network hop 320 us in model
// 5, 15.1 in model 0) and on every bandwidth ratio, so those keep NCCL's rows; they agree on LL
// (model 0, tuning.cc:77 / :81: xGMI tree / ring 0.8 / 0.8, network 11.8 / 9.5; model 5: 0.9 /
// 0.8, 10.5 / 9.5; base 12 in both; 2 x 8 GPUs tree/LL 46.8 vs 45.6 us), so across nodes LL takes
// model 5's (the same in ROCm/rccl@9e22c79, RCCL 2.2x with gfx950, tuning_model_0 /
// tuning_model_5), on cdna3 and cdna4 (docs/fidelity.md "RCCL on AMD, multi-node latency").
#pragma once

#include <array>
#include <cstddef>

namespace twinccl::sim::detail {

// [tree, ring][LL, LL128, Simple]; LinkClass order for hops (nvlink = xGMI, pcie, network).
using RcclPerAlgo = std::array<std::array<double, 3>, 2>;

struct RcclTuningTable {
  RcclPerAlgo base_latency_us;                 // tuning.cc:57-60 baseLat
  std::array<RcclPerAlgo, 3> hop_latency_us;   // tuning_model_5.hwLat, :225-232
  std::array<RcclPerAlgo, 2> bandwidth_ratio;  // tuning_model_5.bwRatio [<= 2 nodes, more]
  std::array<std::array<double, 27>, 3> tree_correction;  // tuning_model_5, :241-245
  // MSCCL all-pairs all_reduce (tools/msccl-algorithms/allreduce-allpairs-8n-*.xml; chosen in
  // src/misc/msccl/msccl_lifecycle.cc:328-342 before RCCL's tuner when the rome model enables
  // MSCCL, every rank is its own process (mscclCommCompatible, :82-88: not nccl-tests -g 8), 8
  // ranks, count % nchunksperloop == 0 and minBytes <= bytes <= maxBytes of one file).
  struct MscclWindow {
    double min_bytes, max_bytes;
    double chunks_per_loop;
    int channels;
    bool ll;  // LL, else Simple
  };
  std::array<MscclWindow, 3> msccl_out_of_place;  // the *-op.xml files
  std::array<MscclWindow, 4> msccl_in_place;
  int msccl_ranks;  // "8n": ngpus="8"
};

inline constexpr RcclTuningTable kRccl{
    .base_latency_us = {{{12.0, 12.0, 17.0}, {12.0, 12.0, 17.0}}},
    .hop_latency_us = {{
        {{{0.9, 0.0, 2.3}, {0.8, 0.0, 2.1}}},      // xGMI ("NVLINK")
        {{{2.2, 2.2, 5.7}, {2.2, 2.2, 5.7}}},      // PCI
        {{{10.5, 0.0, 25.0}, {9.5, 0.0, 320.0}}},  // NET (LL only: see the header)
    }},
    .bandwidth_ratio = {{
        {{{0.06, 0.0, 0.11}, {0.08, 0.0, 1.0}}},  // 1 or 2 nodes
        {{{0.06, 0.0, 0.59}, {0.08, 0.0, 1.0}}},  // more
    }},
    .tree_correction = {{
        {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 1.0, 1.0, 1.0, 1.0, 1.0, 0.6, 1.0, 0.9,
         1.0, 1.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1},
        {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
         0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0},
        {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1,
         0.1, 0.7, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8},
    }},
    .msccl_out_of_place = {{{0.0, 65536.0, 256.0, 4, true},
                            {65537.0, 524287.0, 512.0, 8, true},
                            {524288.0, 16777216.0, 512.0, 8, false}}},
    .msccl_in_place = {{{0.0, 65536.0, 256.0, 4, true},
                        {65537.0, 524287.0, 512.0, 8, true},
                        {524288.0, 11534336.0, 512.0, 8, false},
                        {14680065.0, 16777216.0, 512.0, 8, false}}},
    .msccl_ranks = 8,
};

// RCCL's LL128 protocol ("LL64/128" in its tuning models' ranges), read (not copied) from
// ROCm/rccl at 0cbce2a: src/include/device.h:83-88 (the same values at 857cc6a, a 2.27-era tree),
// src/init.cc:838 (DEFAULT_LL128_BUFFSIZE), src/enqueue.cc:1845-1851 (computeCollChunkInfo). A
// line is 64 bytes, 7 data words and a flag word (NVIDIA's: 128 bytes, 15 + 1), so 56 of 64 bytes
// on the wire are data; a channel runs 256 LL128 threads (NVIDIA's 640) of 28 words a step
// (NVIDIA's 120), so a buffer step is 28 x 256 x 8 = 57344 bytes and an LL128 chunk its data,
// 57344 / 8 x 7 = 50176 bytes (NVIDIA's 576000). What it does not give: a kernel rate per channel.
// RCCL's tuner has no per-channel LL128 cap on AMD (perChMaxRingLL128Bws / perChMaxTreeLL128Bws
// are compiled out under __HIP_PLATFORM_AMD__ in ROCm/rccl@9e22c79 src/graph/tuning.cc; at
// 0cbce2a they sit in the #else branch, :384 / :387), and its bwRatio for LL128 on gfx950 (tuning
// model 6: tree 0.06, ring 0.08, LL's own figures) is a ranking weight, not a rate.
struct RcclLl128 {
  double line_bytes;        // NCCL_LL128_LINESIZE
  double data_bytes;        // NCCL_LL128_DATAELEMS x 8
  double max_threads;       // NCCL_LL128_MAX_NTHREADS
  double elems_per_thread;  // NCCL_LL128_ELEMS_PER_THREAD (8-byte words)
  constexpr double step_data_bytes() const {
    return elems_per_thread * max_threads * 8.0 * data_fraction();
  }
  constexpr double data_fraction() const { return data_bytes / line_bytes; }
};
inline constexpr RcclLl128 kRcclLl128{64.0, 56.0, 256.0, 28.0};

}  // namespace twinccl::sim::detail
