// The synchronisations a Simple ring in one node pays in its first pass beyond the one per step
// NCCL's latency charges (ring_slice_sync_us, model.h).
//
// How it works (NVIDIA/nccl v2.28.7-1, read not copied): a ring all_reduce channel walks its share
// of the buffer in loops of nranks chunks, each loop 2(n-1) steps (src/device/all_reduce.h:12-80
// runRing; reduce_scatter / all_gather n-1). A Simple chunk is ALLREDUCE_CHUNKSTEPS = 4 steps of
// the 4 MiB / NCCL_STEPS buffer (2 MiB; src/include/collectives.h:17-24, the same for
// reduce_scatter / all_gather), cut to nranks pieces of the channel's share when that is smaller,
// and the primitive moves a piece in SlicePerChunk = 4 / 2 = 2 slices, each its own wait on the
// peer, two CTA barriers and post (src/device/prims_simple.h:193-194 the slice size, at least
// 1/32 of 1 MiB; :227-299 the loop). NCCL's tuning charges the NVLink hop latency (3.4 us, Simple
// ring, graph/tuning.cc hwLat) once per step. In the first pass every step waits on the previous
// rank's step, slice by slice, so it pays the hop once per slice: steps x (2 - 1) x 3.4 us more
// (8 A100s, 32 MiB: 14 x 3.4 = 47.6 us). Later loops stream behind it in the connection's
// NCCL_STEPS slots: nothing more (charging them too would put 8 H100s' reduce_scatter 8 GiB +10%
// and 4 GB200s' 8 GiB +8% slow). A piece under two minimum slices moves in one slice: nothing.
// Not in NCCL's ranking (pipeline_fills_us, Channels::launched only); NVIDIA GPUs only (RCCL's one
// node keeps its own terms, rccl_tuning_table.h); one node (across nodes the network step is
// priced by net_window.cc).
#include <algorithm>

#include "model.h"

namespace twinccl::sim::detail {
namespace {

constexpr double kSimpleStepBytes = 4.0 * 1024.0 * 1024.0 / 8.0;  // NCCL_BUFFSIZE / NCCL_STEPS
constexpr double kChunkSteps = 4.0;                               // ALLREDUCE_CHUNKSTEPS
constexpr double kSlicesPerChunk = 2.0;                           // chunk steps / slice steps
constexpr double kMinSliceBytes = 2.0 * kSimpleStepBytes / 32.0;  // prims_simple.h:194

}  // namespace

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
  // either way the first loop of a channel covers n pieces of at most one chunk.
  const double piece = std::min(kChunkSteps * kSimpleStepBytes, bytes / (launched.channels * n));
  const double slices = piece >= 2.0 * kMinSliceBytes ? kSlicesPerChunk : 1.0;
  const double extra_syncs = steps * (slices - 1.0);
  const double hop_us =
      at(kNccl.hop_latency_us[static_cast<std::size_t>(v.intra_class)], algo, index_of(protocol));
  return std::max(0.0, extra_syncs) * hop_us;
}

}  // namespace twinccl::sim::detail
