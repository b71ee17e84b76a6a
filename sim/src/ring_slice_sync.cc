// The synchronisations a Simple ring in one node pays in every pass beyond the one per step
// NCCL's latency charges (ring_slice_sync_us, model.h).
//
// How it works (NVIDIA/nccl v2.28.7-1, read not copied): a ring all_reduce channel walks its share
// of the buffer in loops of nranks chunks, each loop 2(n-1) steps (src/device/all_reduce.h:12-80
// runRing; reduce_scatter / all_gather n-1). A Simple chunk is ALLREDUCE_CHUNKSTEPS = 4 steps of
// the 4 MiB / NCCL_STEPS buffer (2 MiB; src/include/collectives.h:17-24, the same for
// reduce_scatter / all_gather); the last loop cuts its remainder into nranks pieces
// (all_reduce.h:36), and the primitive moves a piece in SlicePerChunk = 4 / 2 = 2 slices, each its
// own wait on the peer, two CTA barriers and post (src/device/prims_simple.h:193-194 the slice
// size, at least 1/32 of a slice's 2 steps; :227-299 the loop, the same in every pass). NCCL's
// tuning charges the NVLink hop latency (3.4 us, Simple ring, graph/tuning.cc hwLat) once per step;
// each step of each loop pays it once per slice: steps x (2 - 1) x 3.4 us more a loop (8 A100s,
// 32 MiB, one loop: 14 x 3.4 = 47.6 us; 1 GiB on 12 channels, 6 loops: 285.6 us). A piece within
// one minimum slice (32 KiB) moves in one slice: nothing (nccl_ring_simple_slices, model.h).
// [assumed] a later loop's slice sync costs the hop as the first's does: NCCL_STEPS slots let the
// data arrive early, but not the CTA's own barriers and post. Charging the first pass only (until
// the special round) was not NCCL's code; every pass moved 25 held-out rows >= 256 MiB, 22 closer
// (docs/fidelity.md, "Three restrictions audited"). Not in NCCL's ranking (pipeline_fills_us,
// Channels::launched only); NVIDIA GPUs only (RCCL's one node keeps its own terms,
// rccl_tuning_table.h); one node (across nodes the network step is priced by net_window.cc).
#include <algorithm>
#include <cmath>

#include "model.h"

namespace twinccl::sim::detail {
double ring_slice_sync_us(const TopologyView& v, NcclAlgo algo, Protocol protocol, OpKind kind,
                          double bytes, const ChannelPlan& launched) {
  const bool ring_collective =
      kind == OpKind::all_reduce || kind == OpKind::reduce_scatter || kind == OpKind::all_gather;
  if (algo != NcclAlgo::ring || protocol != Protocol::simple || !ring_collective || v.nodes != 1 ||
      v.nranks < 2 || launched.channels < 1 || !(bytes > 0.0) ||
      (v.arch != topo::GpuArch::ampere && v.arch != topo::GpuArch::hopper &&
       v.arch != topo::GpuArch::blackwell)) {
    return 0.0;
  }
  const double n = v.nranks;
  const double steps = kind == OpKind::all_reduce ? 2.0 * (n - 1.0) : n - 1.0;
  // nccl-tests' bytes: the per-rank buffer (all_reduce) or n x the per-rank count (the others);
  // either way a channel's loop covers n pieces of at most one chunk.
  const double step_bytes = nccl_simple_step_bytes(v);  // NCCL_BUFFSIZE / NCCL_STEPS
  const double chunk = kNcclRingSimpleChunkSteps * step_bytes;
  const double share = bytes / launched.channels;
  const double full_loops = std::floor(share / (n * chunk));
  const double last_piece = (share - full_loops * n * chunk) / n;  // all_reduce.h:36
  // Each slice beyond a piece's first is one more sync (nccl_ring_simple_slices, model.h).
  const double extra_slices = full_loops * (nccl_ring_simple_slices(v, chunk).slices - 1.0) +
                              nccl_ring_simple_slices(v, last_piece).slices - 1.0;
  const double extra_syncs = steps * extra_slices;
  const double hop_us =
      at(kNccl.hop_latency_us[static_cast<std::size_t>(v.intra_class)], algo, index_of(protocol));
  return std::max(0.0, extra_syncs) * hop_us;
}

}  // namespace twinccl::sim::detail
