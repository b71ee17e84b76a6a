// RCCL's terms where they differ from NCCL's, for AMD Instinct MI300X / MI325X in one node
// (GpuArch::cdna3) and, across nodes, RCCL's LL latency on cdna3 and cdna4 (MI355X), and RCCL's
// LL128 line on every AMD GPU; constants and sources in rccl_tuning_table.h.
//
// How it works. The NCCL model (analytic_nccl.cc) asks here first when the communicator is one
// node of cdna3 GPUs:
//   * latency: RCCL's base latency (ring/tree 12 us LL, 17 us Simple) and its xGMI hop latency
//     (ring 0.8 / 2.1 us, tree 0.9 / 2.3 us) in NCCL's formulas (the same shape in RCCL): 8
//     MI300X, ring/LL all_reduce: 12 + 14 x 0.8 = 23.2 us;
//   * bandwidth: the channels' busBw x RCCL's ratio (ring LL 0.08, ring Simple 1, tree LL 0.06), no
//     LL cap or per-channel caps, tree x RCCL's correction by size; no launched-channel scaling;
//   * availability: RCCL's own choice never takes LL128 (off on gfx942) nor tree/Simple (skipped on
//     one gfx94 node); forced, they are priced as NCCL's Hopper row (rccl_bus_bandwidth: nullopt;
//     LL128 with RCCL's line, below);
//   * MSCCL: with one process per GPU RCCL runs its all-pairs all_reduce for 8 ranks from 1 KiB to
//     16 MiB (count a multiple of 256 / 512 elements) before its tuner: every GPU sends S/8 to each
//     of its 7 peers, reduces, and sends its reduced S/8 back, each step one hop over a direct
//     xGMI link. Its latency is priced as two ring hops of RCCL's table after its base (LL 12 + 2
//     x 0.8 = 13.6 us; Simple 17 + 2 x 2.1 = 21.2 us) [assumed: MSCCL is not in RCCL's tuning
//     model]; its bandwidth as the GPU's links: 2 x 7/8 S over 7 x 48 GB/s at once, algbw = 336 x
//     8 / 14 = 192 GB/s Simple, half that for LL (8 data bytes in 16) [assumed: the link bound;
//     MSCCL's 8 channels do not reach it from ~2 MiB, docs/fidelity.md]. MSCCL's local passes
//     add to it, not overlap it: RCCL's interpreter loops over a chunk in pieces of its step
//     size x MSCCL_CHUNKSTEPS (ROCm/rccl@0cbce2a src/device/msccl_kernel_impl.h:209, :253; the
//     4 MiB Simple buffer, init.cc:839, / NCCL_STEPS 8 x 4 = 2 MiB,
//     include/msccl/msccl_struct.h:24) and one all-pairs chunk is S / 512 (16 MiB: 32 KiB), so the
//     whole program runs once, phase after phase; each threadblock sends its peer's slice, then
//     receives (copies its FIFO into scratch, then the result into the user buffer: steps "s",
//     "r" of tools/msccl-algorithms/allreduce-allpairs-8n-simple*.xml, one threadblock each),
//     and the 7 "re" steps run as one fused reduce of 8 sources
//     (misc/msccl/msccl_parser.cc:627-636, msccl_kernel_impl.h:325-351). Device memory moves 2 x 2
//     x 7/8 S + 9/8 S = 4.625 S meanwhile, at the GPU's HBM rate x kDeviceCopyEfficiency (5.3 TB/s
//     x 0.9 on MI300X): 16 MiB +16 us. Left: -16% at 16 MiB [the copies run on 56 CUs, each under
//     the HBM rate: no source gives a CU's rate].
//   * across nodes (cdna3 and cdna4, LL only): RCCL's base latency (12 us) and its xGMI and
//     network hop latencies for LL, in NCCL's formulas (nccl_latency_parts adds the network
//     class and the ring's per-step network overhead): 2 x 8 GPUs, tree/LL all_reduce: 12 + 2 x
//     (7 x 0.9 + 1 x 10.5) = 45.6 us (NCCL's rows: 25). The ring's per-step network overhead
//     stays NCCL's 1 us (RCCL's getNetOverhead says 2 on AMD CPUs; the topology does not say
//     the CPU). Bandwidth and the other protocols keep NCCL's rows (rccl_tuning_table.h: why).
//   * LL128 on AMD GPUs (any node count; RCCL runs it across gfx950 nodes): RCCL's line, 64
//     bytes of which 56 are data (ROCm/rccl@0cbce2a src/include/device.h:83-85; NVIDIA's 120 of
//     128), in NCCL's LL128 factors that stand for the line (tree x 120/128 -> 56/64 across nodes,
//     ring 0.92 x 14/15), on the wire (64/56 bytes a data byte) and in the tree's chunk (RCCL's
//     step, 28 words x 256 threads x 8 x 7/8 = 50176 data bytes; device.h:87-88, init.cc:838,
//     enqueue.cc:1845-1851). The per-channel LL128 caps stay NCCL's Hopper figures [assumed]:
//     RCCL's tuner has none on AMD (compiled out, ROCm/rccl@9e22c79 src/graph/tuning.cc) and no
//     source gives its kernel's rate. 2 x 8 MI355X tree/LL128: busBw min(331.2 x 56/64, 8 x 36.7) =
//     289.8 GB/s (NVIDIA's line: the 293.6 cap).
//   * the host's per-call launch (host_launch.h) is not added: RCCL's base latency is the per-call
//     floor rccl-tests measures (RCCL's 12 us against NCCL's 6.6), and the AMD blog's HIP-graph run
//     of the same machine (no launch per call) measures 16.38 / 15.75 us at 8 / 16 B against 16.61
//     / 16.12 us launched (tests/fidelity/logs/SOURCES.md): the launch hides behind the kernels.
#include <cmath>

#include "model.h"
#include "rccl_tuning_table.h"

namespace twinccl::sim::detail {
namespace {

std::optional<std::size_t> rccl_algo_index(NcclAlgo algo) {
  if (algo == NcclAlgo::tree) return 0;
  if (algo == NcclAlgo::ring) return 1;
  return std::nullopt;
}

std::size_t node_row(int nodes) { return nodes <= 2 ? 0 : 1; }

// Across nodes RCCL's LL latency terms (base, xGMI and network hops) on cdna3 / cdna4: every RCCL
// tuning model an 8-GPU xGMI node can match agrees on them (rccl_tuning_table.h).
bool rccl_prices_multinode_ll(const TopologyView& v, Protocol p) {
  return topo::is_amd(v.arch) && v.nodes > 1 && v.nranks > 1 && p == Protocol::ll &&
         v.intra_class == LinkClass::nvlink;
}

}  // namespace

bool rccl_models(const TopologyView& v) {
  return v.arch == topo::GpuArch::cdna3 && v.nodes == 1 && v.nranks > 1;
}

bool rccl_chooses(const TopologyView& v, NcclAlgo algo, Protocol p) {
  // LL128 is off on gfx942 at any node count (tuning.cc:509-515), whatever the tuning model.
  if (v.arch == topo::GpuArch::cdna3 && p == Protocol::ll128) return false;
  if (!rccl_models(v)) return true;
  const auto a = rccl_algo_index(algo);
  if (!a) return true;
  return kRccl.bandwidth_ratio[node_row(v.nodes)][*a][index_of(p)] > 0.0 &&
         !(algo == NcclAlgo::tree && p == Protocol::simple);
}

std::optional<double> rccl_bus_bandwidth(const TopologyView& v, const ChannelPlan& plan,
                                         NcclAlgo algo, Protocol p) {
  if (!rccl_models(v) || !rccl_chooses(v, algo, p)) return std::nullopt;
  const auto a = rccl_algo_index(algo);
  if (!a) return std::nullopt;
  return plan.bus_gbps * kRccl.bandwidth_ratio[node_row(v.nodes)][*a][index_of(p)];
}

std::optional<LatencyParts> rccl_latency_parts(const TopologyView& v, NcclAlgo algo, Protocol p) {
  const auto a = rccl_algo_index(algo);
  if (!a) return std::nullopt;
  const std::size_t pi = index_of(p);
  const bool one_node = rccl_models(v) && rccl_chooses(v, algo, p);
  if (!one_node && !rccl_prices_multinode_ll(v, p)) return std::nullopt;
  LatencyParts l;
  l.base_us = kRccl.base_latency_us[*a][pi];
  l.intra_hop_us = kRccl.hop_latency_us[static_cast<std::size_t>(v.intra_class)][*a][pi];
  if (v.nodes > 1) {
    // RCCL charges one rank per node the tree's network hop whatever the algorithm (ppn == 1).
    const std::size_t net_algo = v.ranks_per_node == 1 ? 0 : *a;
    l.net_hop_us = kRccl.hop_latency_us[static_cast<std::size_t>(LinkClass::network)][net_algo][pi];
  }
  return l;
}

std::optional<double> rccl_tree_correction(const TopologyView& v, Protocol p, double bytes) {
  if (!rccl_models(v) || !rccl_chooses(v, NcclAlgo::tree, p)) return std::nullopt;
  const int log_size = bytes >= 64.0 ? nccl_log2i(bytes / 64.0) : 0;
  const std::size_t i = static_cast<std::size_t>(std::min(log_size, 26));
  return kRccl.tree_correction[index_of(p)][i];
}

double ll128_data_fraction(const TopologyView& v) {
  return topo::is_amd(v.arch) ? kRcclLl128.data_fraction()
                              : 1.0 / kNccl.wire_bytes_per_byte[index_of(Protocol::ll128)];
}

double ll128_line_ratio(const TopologyView& v) {
  return ll128_data_fraction(v) * kNccl.wire_bytes_per_byte[index_of(Protocol::ll128)];
}

double protocol_wire_bytes_per_byte(const TopologyView& v, Protocol p) {
  return p == Protocol::ll128 ? 1.0 / ll128_data_fraction(v)
                              : kNccl.wire_bytes_per_byte[index_of(p)];
}

std::optional<double> rccl_ll128_step_data_bytes(const TopologyView& v) {
  if (!topo::is_amd(v.arch)) return std::nullopt;
  return kRcclLl128.step_data_bytes();
}

std::optional<MscclCall> msccl_allpairs(const TopologyView& v, OpKind kind, std::size_t count,
                                        std::size_t element_bytes, bool in_place) {
  if (!rccl_models(v) || kind != OpKind::all_reduce || v.nranks != kRccl.msccl_ranks ||
      count == 0 || v.intra_class != LinkClass::nvlink || !(v.intra_gbps > 0.0)) {
    return std::nullopt;
  }
  const double bytes = static_cast<double>(count) * static_cast<double>(element_bytes);
  const auto pick = [&](const auto& windows) -> const RcclTuningTable::MscclWindow* {
    for (const auto& w : windows) {
      const bool whole = std::fmod(static_cast<double>(count), w.chunks_per_loop) == 0.0;
      if (whole && bytes >= w.min_bytes && bytes <= w.max_bytes) return &w;
    }
    return nullptr;
  };
  const RcclTuningTable::MscclWindow* w =
      in_place ? pick(kRccl.msccl_in_place) : pick(kRccl.msccl_out_of_place);
  if (w == nullptr) return std::nullopt;
  const Protocol p = w->ll ? Protocol::ll : Protocol::simple;
  const std::size_t pi = index_of(p);
  const std::size_t ring = 1;
  const std::size_t xgmi = static_cast<std::size_t>(LinkClass::nvlink);
  const double n = v.nranks;
  const double latency =
      kRccl.base_latency_us[ring][pi] + 2.0 * kRccl.hop_latency_us[xgmi][ring][pi];
  const double algbw = v.intra_gbps * n / (2.0 * (n - 1.0)) / kNccl.wire_bytes_per_byte[pi];
  // The device-memory passes that wait on the links (header: "MSCCL's local passes"): two
  // receive copies of (n-1)/n S (a read and a write each) and the fused reduce of n + 1 slices.
  const double local_bytes = (4.0 * (n - 1.0) / n + (n + 1.0) / n) * bytes;
  const double memory_gbps = v.memory_gbps * kDeviceCopyEfficiency;
  const double local_us = memory_gbps > 0.0 ? local_bytes / (1000.0 * memory_gbps) : 0.0;
  return MscclCall{p, w->channels, latency + bytes / (1000.0 * algbw) + local_us};
}

}  // namespace twinccl::sim::detail
