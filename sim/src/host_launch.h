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
// Both figures are the host's (CPU, driver, NCCL version), and they differ on one host: 8 A100s of
// one machine (tests/fidelity/logs) take 30.25 us at 32 KiB one process per GPU (7.8 us above
// NCCL's 20.7 us kernel model: the per-call figure) and 40.93 us with `-g 8` (5.1 us per GPU: the
// thread's per-GPU figure). So a topology has two facts, `host_launch_us` (per call) and
// `group_launch_us` (per GPU of a -g N thread), which `twinccl calibrate` fits from a log's small
// rows (one per launch mode) or `--set` gives; 0 = kHostLaunchUs.
//   time = max(kernels + host_launch, gpus_per_thread x group_launch)
#pragma once

#include <algorithm>

#include "twinccl/topologies/topology.h"

namespace twinccl::sim::detail {

// CUDA launch + NCCL enqueue of one call on one GPU (nccl-tests issue 123, see above).
inline constexpr double kHostLaunchUs = 5.0;

// A topology's launch figures (its facts, else kHostLaunchUs).
struct HostLaunch {
  double call_us = kHostLaunchUs;       // host_launch_us: one call, one GPU per process
  double group_gpu_us = kHostLaunchUs;  // group_launch_us: per GPU of a -g N thread
};
inline HostLaunch host_launch_of(const topo::Topology& topology) {
  const topo::TopologyFacts& f = topology.facts();
  return {f.host_launch_us > 0.0 ? f.host_launch_us : kHostLaunchUs,
          f.group_launch_us > 0.0 ? f.group_launch_us : kHostLaunchUs};
}

// The time nccl-tests measures for a call whose kernels take `kernel_us`, one host thread
// launching `gpus_per_thread` GPUs (nccl-tests -g); 0 GPUs = the kernels alone (NCCL's model).
inline double host_bound_time_us(double kernel_us, int gpus_per_thread,
                                 const HostLaunch& launch = {}) {
  if (gpus_per_thread <= 0) return kernel_us;
  return std::max(kernel_us + launch.call_us, gpus_per_thread * launch.group_gpu_us);
}

}  // namespace twinccl::sim::detail
