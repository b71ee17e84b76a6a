// NVLS all_reduce on one node before NCCL 2.20.3: the bytes its busiest channel carries
// (nvls_busiest_channel_bytes), which time the call instead of its own bytes.
//
// How it works (NVIDIA/nccl, read not copied). NVLS deals a call out in steps of channels x heads
// x chunk ("loopSize"). Up to 2.19 every channel takes the same place in each step: channel b
// works on bytes [b x heads x chunk, (b+1) x heads x chunk) of the step (v2.18.5-1
// src/collectives/device/all_reduce.h:378-460, `offset = gridOffset + bid*nHeads*chunkSize`;
// v2.19.4-1 src/device/all_reduce.h the same), with every one of the 16 channels launched
// (v2.18.5-1 src/enqueue.cc:1203-1205 nvlsChannels) and a 16 KiB chunk below 8 MiB (:1339-1345).
// So a call below one step (8 H100s: 16 x 8 x 16 KiB = 2 MiB) runs on channel 0 alone up to
// 128 KiB, on ceil(bytes / 128 KiB) channels above, each as busy as in a full 2 MiB step:
//
//   64 KiB, 8 heads x 16 KiB chunk:  channel 0 [64 KiB]   channels 1..15 idle
//   2 MiB:                           channel 0 [128 KiB]  channel 1 [128 KiB] ... channel 15
//
// From 2.20.3 one node splits the call evenly over the channels first (addCBDCollToPlan,
// v2.20.5-1 src/enqueue.cc:431-500; the kernel's `oneNode` branch, src/device/all_reduce.h), so
// no channel carries more than bytes / channels. The call then takes what NCCL's price gives a
// call whose every channel carries the busiest one's bytes: channels x those bytes, at NCCL's
// NVLS rate (analytic_nccl.cc). Example, 8 H100s, 2.18.5, 64 KiB: 16 x 64 KiB = 1 MiB priced.
#include <algorithm>
#include <cmath>

#include "model.h"

namespace twinccl::sim::detail {

double nvls_busiest_channel_bytes(const TopologyView& v, NcclAlgo algo, OpKind kind, double bytes) {
  const bool grid_stride = nccl_before(v, kNcclVersionTerms.nvls_one_node_even_split_since);
  if (!grid_stride || algo != NcclAlgo::nvls || kind != OpKind::all_reduce || v.nodes != 1 ||
      bytes <= 0.0) {
    return bytes;
  }
  // NCCL's channels and heads for this version (nccl_nvls_channels, the one owner).
  const NvlsSteps s = nccl_nvls_steps(v, algo, bytes);
  const double channels = s.channels;
  const double channel_step = s.heads * s.chunk_bytes;
  const double step = channels * channel_step;  // loopSize
  const double full_steps = std::floor(bytes / step);
  const double busiest =
      full_steps * channel_step + std::min(channel_step, bytes - full_steps * step);
  return std::max(bytes, channels * busiest);
}

}  // namespace twinccl::sim::detail
