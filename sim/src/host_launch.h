// Internal: the host side of a call as nccl-tests times it, which NCCL's tuning model leaves out.
//
// How it works. NCCL's model (tuning.cc) times the kernels: base + hop latencies + bytes / bw. It
// ranks algorithms with it, so a cost common to all of them does not matter to NCCL; it matters to
// a prediction of what nccl-tests prints. nccl-tests times `iters` calls issued back to back and
// divides, so per call:
//   * every call also pays the CUDA launch and NCCL's enqueue overhead, about 5 us: the NCCL
//     maintainer's "you also need to factor in the CUDA launch time and some overhead (~5us)"
//     (https://github.com/NVIDIA/nccl-tests/issues/123, sjeaugey, 2022-12-14);
//   * with `-g N` one thread launches the N GPUs' kernels in turn ("all GPUs are handled by a
//     single thread and that causes extra latency as the CPU is the bottleneck", same comment), so
//     a call takes at least N launches of the thread's time. The same issue's DGX-A100 table
//     (-g N, ring, 1 channel) grows by about 4 us per GPU from N = 4 to 8 (16.9 -> 33.7 us).
//   time = max(kernels + launch, gpus_per_thread x launch)
// Example, 8 A100s, 32 KiB all_reduce (kernels 20.7 us): one GPU per process 25.7 us; -g 8:
// max(25.7, 40) = 40 us (nccl-tests prints 30.25 and 40.93, tests/fidelity/logs).
// Common to every algorithm and protocol, so it is added after the tuner's choice, never in it.
#pragma once

#include <algorithm>

namespace twinccl::sim::detail {

// CUDA launch + NCCL enqueue of one call on one GPU (nccl-tests issue 123, see above).
inline constexpr double kHostLaunchUs = 5.0;

// The time nccl-tests measures for a call whose kernels take `kernel_us`, one host thread
// launching `gpus_per_thread` GPUs (nccl-tests -g); 0 = the kernels alone (NCCL's model).
inline double host_bound_time_us(double kernel_us, int gpus_per_thread) {
  if (gpus_per_thread <= 0) return kernel_us;
  return std::max(kernel_us + kHostLaunchUs, gpus_per_thread * kHostLaunchUs);
}

}  // namespace twinccl::sim::detail
