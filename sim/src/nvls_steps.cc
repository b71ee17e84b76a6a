// NCCL's NVLS steps: how many chunks an NVLS / NVLS-tree all_reduce runs in parallel
// (nccl_nvls_ops: nccl_nvls_channels x nccl_nvls_heads), how big each is (nccl_nvls_chunk_bytes),
// a call's steps and the share of a fill they expose (nccl_nvls_steps), and what the steps cost
// beyond NCCL's latency (nvls_pipeline_fill_us, nvls_step_sync_us; both in pipeline_fills_us,
// never in NCCL's ranking). These are the one owner of each: the grid stride before 2.20.3
// (nvls_grid_stride.cc), the NVLS-tree network fill (nvls_tree_net_fill.cc), the network window
// (net_window.cc) and the older NCCL's ranking (nccl_version_rank.cc) read them, never derive them.
//
// How it works (NVIDIA/nccl v2.27.7-1 / v2.28.7-1 src/enqueue.cc calcCollChunking, read not
// copied): NVLS runs channels x heads chunks at once ("concurrentOps"); its chunk starts from
// NCCL_NVLS_CHUNKSIZE (128 KiB, or the cloud's: network_class.h; NVLS from NCCL 2.21, 128 KiB
// before; at most one Simple step, NCCL_BUFFSIZE / 8) and falls to 64 / 32 / 16 KiB as bytes
// shrink against concurrentOps (NVLS-tree: 256 / 128 / 64 / 32 KiB, at most
// NCCL_NVLSTREE_MAX_CHUNKSIZE, 64 KiB from 4 nodes unless the cloud sets it). The halving compares
// with the start chunk: 8 H100s on EFA (512 KiB) run 64 KiB chunks up to 4 GiB, not 1 GiB.
// * The fill: nvls_fill_steps steps of channels x heads x chunk at NCCL's algbw (without its
//   Blackwell x86 NVLS-tree correction, which prices NCCL's bytes term only), K/(K+1) of it
//   exposed for K steps per channel (8 H100s, 1 GiB: K = 64, 2 x 16 x 8 x 128 KiB / 280 GB/s x
//   64/65 = 118 us; 2 nodes, 8 MiB: K = 1, half of 68 us).
// * Blackwell, one NVLink domain: one synchronisation per step the smaller chunk adds over the
//   128 KiB NCCL's price is measured at (8 B200s, 64 MiB: 32 KiB chunks, 8 more steps a channel,
//   67 us; the constant is fitted: nccl_tuning_table.h nvls_step_sync_us_blackwell). 128 KiB, not
//   the call's start chunk: NCCL's price has no chunk term (graph/tuning.cc reads no chunk size,
//   v2.22.3-1 to v2.30.7-1), so it is the same rate whatever NCCL_NVLS_CHUNKSIZE says, and the
//   rows the constant was fitted on ran NCCL's 128 KiB (docs/fidelity.md). Blackwell
//   only is the rows' choice, not NCCL's code (the wait and the chunk do not look at the arch);
//   on Hopper the same term makes 27 of 31 rows worse (nccl_tuning_table.h, docs/fidelity.md).
#include <algorithm>
#include <string>

#include "model.h"
#include "network_class.h"
#include "twinccl/errors.h"

namespace twinccl::sim::detail {

double nccl_nvls_channels(const TopologyView& v) {
  if (v.arch != topo::GpuArch::blackwell) return kNccl.nvls_channels_hopper;
  if (v.nodes > 1) return kNccl.nvls_channels_blackwell_nodes;
  // One NVLink domain on Blackwell: 24 channels from 2.27, 32 before (kNcclVersionTerms).
  const bool before_domain_channels =
      nccl_before(v, kNcclVersionTerms.blackwell_nvls_domain_channels_since);
  return before_domain_channels ? kNcclVersionTerms.nvls_channels_blackwell_1node_before_2_27
                                : kNccl.nvls_channels_blackwell_1node;
}

double nccl_nvls_heads(const TopologyView& v) {
  // One per GPU of a node, across nodes one per NIC (search.cc: NVLS channels), at most
  // NCCL_MAX_NVLS_ARITY.
  return nvls_heads(v.nodes > 1 && v.nics_per_node > 0 ? std::min(v.ranks_per_node, v.nics_per_node)
                                                       : v.ranks_per_node);
}

double nccl_nvls_ops(const TopologyView& v) {
  return nccl_nvls_channels(v) * nccl_nvls_heads(v);  // enqueue.cc's "concurrentOps"
}

NvlsSteps nccl_nvls_steps(const TopologyView& v, NcclAlgo algo, double bytes) {
  NvlsSteps s;
  s.channels = nccl_nvls_channels(v);
  s.heads = nccl_nvls_heads(v);
  s.ops = s.channels * s.heads;
  s.chunk_bytes = nccl_nvls_chunk_bytes(v, algo, bytes, s.ops);
  s.step_bytes = std::min(s.ops * s.chunk_bytes, bytes);
  // Pipeline steps per channel (K >= 1): only K/(K+1) of a fill is exposed (one step per channel
  // fills half; from 8 steps 89%): a step that runs alone runs faster than one among others.
  s.steps = std::max(1.0, bytes / (s.ops * s.chunk_bytes));
  s.exposed = s.steps / (s.steps + 1.0);
  return s;
}

void check_nvls_steps(const NvlsSteps& s, const char* where) {
  if (!(s.ops > 0.0) || !(s.chunk_bytes > 0.0)) {
    throw InternalError(std::string(where) + ": NVLS steps not computed (ops " +
                        std::to_string(s.ops) + ", chunk " + std::to_string(s.chunk_bytes) +
                        " bytes); pass nccl_nvls_steps for the call");
  }
}

namespace {

// NCCL_NVLS_CHUNKSIZE as the call's NCCL reads it for `algo`: the cloud's export (network_class.h)
// or 128 KiB. Both read it from 2.21 (kNcclVersionTerms.nvls_chunk_env_since; v2.21.5-1
// transport/nvls.cc:233, no such parameter in v2.20.3-1). Before, NVLS took 128 KiB whatever the
// environment, and NVLS-tree started from one Simple step (v2.20.3-1 enqueue.cc:1687 chunkSteps 1,
// :1715-1717 capped by NCCL_NVLSTREE_MAX_CHUNKSIZE, NCCL's 64 KiB from 4 nodes, below). A row
// whose version is unknown reads as the newest.
double nvls_env_chunk_bytes(const TopologyView& v, NcclAlgo algo) {
  const bool before_env = nccl_before(v, kNcclVersionTerms.nvls_chunk_env_since);
  if (before_env && algo != NcclAlgo::nvls) return nccl_simple_step_bytes(v);
  const double cloud = network_terms(v.network).nvls_chunk_bytes;
  return !before_env && cloud > 0.0 ? cloud : kNccl.nvls_chunk_bytes;
}

}  // namespace

double nccl_nvls_chunk_bytes(const TopologyView& v, NcclAlgo algo, double bytes, double ops) {
  double chunk = nvls_env_chunk_bytes(v, algo);
  constexpr double k16 = 16.0 * 1024.0, k32 = 2.0 * k16, k64 = 2.0 * k32;
  if (algo == NcclAlgo::nvls) {
    // One Simple step (stepSize x chunkSteps 1), at most NCCL_NVLS_CHUNKSIZE (v2.22.3-1
    // enqueue.cc:1757-1760,1776-1778, one node only; the multi-node 32 KiB cap of :1777 not taken;
    // v2.18.1-1 :1309-1312,1341-1342 with 128 KiB), then the halving against that start
    // (:1781-1783).
    chunk = std::min(chunk, nccl_simple_step_bytes(v));
    if (bytes < 64.0 * ops * chunk && chunk > k64) chunk = k64;
    if (bytes < 8.0 * ops * chunk && chunk > k32) chunk = k32;
    if (bytes < 2.0 * ops * chunk && chunk > k16) chunk = k16;
  } else {
    // NVLS-tree (v2.27.7-1 enqueue.cc:2019-2033): NCCL_NVLS_CHUNKSIZE, at most
    // NCCL_NVLSTREE_MAX_CHUNKSIZE (NCCL's: 64 KiB from 4 nodes), each the cloud's where its
    // environment sets it (network_class.h: 512 KiB both on EFA, the first on GCP's gIB).
    const double cloud_max = network_terms(v.network).nvls_tree_max_chunk_bytes;
    if (cloud_max > 0.0) {
      chunk = std::min(chunk, cloud_max);
    } else if (v.nodes >= 4) {
      chunk = std::min(chunk, kNccl.nvls_tree_chunk_bytes_4nodes);
    }
    constexpr double k128 = 2.0 * k64, k256 = 2.0 * k128;
    if (bytes < 32.0 * ops * chunk && chunk > k256) chunk = k256;
    if (bytes < 16.0 * ops * chunk && chunk > k128) chunk = k128;
    if (bytes < 4.0 * ops * chunk && chunk > k64) chunk = k64;
    if (bytes < ops * chunk && chunk > k32) chunk = k32;
  }
  return chunk;
}

double nvls_pipeline_fill_us(const TopologyView& v, NcclAlgo algo, OpKind kind, double bytes,
                             int requested_channels, const NvlsSteps& s) {
  if (kind != OpKind::all_reduce || (algo != NcclAlgo::nvls && algo != NcclAlgo::nvls_tree) ||
      bytes <= 0.0 || v.nranks < 2) {
    return 0.0;
  }
  check_nvls_steps(s, "nvls_pipeline_fill_us");
  const ChannelPlan plan = nccl_channels(v, requested_channels);
  // NCCL's algbw without its Blackwell x86 NVLS-tree correction: NCCL applies that factor to its
  // model's bytes term only (v2.29.2-1 src/graph/tuning.cc:595,602; its latency and any fill are
  // outside it), and taking it here too moved the held-out Lambda B200 16-64 MiB rows from
  // -5..+3% to +5..+9% (docs/fidelity.md, "One owner for each NVLS decision").
  double algbw = nccl_bus_bandwidth(v, plan, algo, Protocol::simple, kind);
  if (algo == NcclAlgo::nvls_tree) algbw = nvls_tree_algbw_from_bus(algbw, v.nranks);
  // One step of every channel and head, K/(K+1) of it exposed (nccl_nvls_steps).
  return algbw > 0.0 ? kNccl.nvls_fill_steps * s.exposed * s.step_bytes / (1000.0 * algbw) : 0.0;
}

double nvls_step_sync_us(const TopologyView& v, NcclAlgo algo, OpKind kind, double bytes,
                         const NvlsSteps& s) {
  if (algo != NcclAlgo::nvls || kind != OpKind::all_reduce || v.nodes != 1 ||
      v.arch != topo::GpuArch::blackwell || !(bytes > 0.0) || v.nranks < 2) {
    return 0.0;
  }
  check_nvls_steps(s, "nvls_step_sync_us");
  const double extra_steps = bytes / s.ops * (1.0 / s.chunk_bytes - 1.0 / kNccl.nvls_chunk_bytes);
  return kNccl.nvls_step_sync_us_blackwell * std::max(0.0, extra_steps);
}

}  // namespace twinccl::sim::detail
