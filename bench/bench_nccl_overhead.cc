// What TwinCCL's NCCL backend costs on top of calling NCCL directly, on one GPU (world size 1).
//
//   build/bench/bench_nccl_overhead            # exits 77 without NCCL support or without a GPU
//   build/bench/bench_nccl_overhead --host-only  # the host figures only (no 256 MiB buffers)
//
// Without a GPU, on the recording double (tests/backends/nccl_double) in its fast mode (stream
// operations run inside the call, no log), host figures only: with D=build/backends/
// libtwinccl_nccl_double.so,
//   TWINCCL_DOUBLE_FAST=1 TWINCCL_DOUBLE_IN_PROGRESS_POLLS=0 TWINCCL_NCCL_LIBRARY=$D
//   TWINCCL_CUDART_LIBRARY=$D build/bench/bench_nccl_overhead --host-only
// There the "NCCL" and "CUDA" calls are the double's, so the overhead printed is TwinCCL's own host
// work plus the double's (small) cost of the extra CUDA calls the backend makes (events, stream
// waits): a figure to compare before/after a change, not a GPU's. The calling thread's CPU time
// per call is printed beside the wall time: on a loaded machine it is the steadier figure (in the
// fast mode every operation runs on that thread).
//
// How it works: both paths enqueue all_reduce(sum, float32) on the same communicator and stream.
//   host:   small all_reduce (256 B), many async calls, time per call on the host (the GPU work
//           is the same for both, so the difference is TwinCCL's validation, OpDesc, event, Work);
//           the stream is drained between batches so the GPU queue never fills.
//   device: 256 MiB all_reduce, CUDA-event timed on the stream, median of 20; blocking TwinCCL
//           calls vs ncclAllReduce + cudaStreamSynchronize.
// Targets: < 1 us host overhead per call, < 2 % at 256 MiB. Prints both and whether they are met.
//
// What it measures at world size 1: NCCL's one-rank path (ncclLaunchOneRank: a cudaMemcpyAsync,
// no collective kernel, no network), so the device figure is TwinCCL's overhead on top of a copy,
// not on a real all_reduce. The program prints this beside the numbers. A multi-rank figure needs
// two GPUs (or NCCL >= 2.30 with NCCL_MULTI_RANK_GPU_ENABLE=1): --ranks N, which also times the
// same call on a blocking communicator (nccl-tests' kind) beside TwinCCL's non-blocking one.
// CUDA and NCCL are reached through the run-time loaded table (nccl/loader.h), like the backend.
#include <cstdio>

#if defined(TWINCCL_HAVE_NCCL)

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <vector>

#include "nccl/communicator.h"
#include "nccl/launch.h"
#include "nccl/loader.h"

namespace {

using Clock = std::chrono::steady_clock;
using twinccl::Communicator;
using twinccl::DataType;
using twinccl::ReduceOp;

constexpr int kHostCalls = 20000;
constexpr int kBatch = 500;

using twinccl::nccl::api;

// Polls until the stream drained (a stuck GPU ends the benchmark instead of hanging it).
void drain(cudaStream_t stream) {
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (api().cudaStreamQuery(stream) == cudaErrorNotReady) {
    if (Clock::now() > deadline) {
      std::printf("bench_nccl_overhead: the stream did not drain within 120 s\n");
      std::exit(1);
    }
  }
}

void wait_event(cudaEvent_t event) {
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (api().cudaEventQuery(event) == cudaErrorNotReady) {
    if (Clock::now() > deadline) {
      std::printf("bench_nccl_overhead: an event did not complete within 120 s\n");
      std::exit(1);
    }
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) / 1e3;
}

struct HostCost {
  double wall_us = 0;  // per call, median over the batches
  double cpu_us = 0;   // the calling thread's CPU time per call, median over the batches
};

// Host microseconds per call of `issue`, draining the stream every kBatch calls (not timed). The
// median over batches keeps a batch the scheduler interrupted out of the figure.
template <class Issue>
HostCost host_us_per_call(cudaStream_t stream, Issue&& issue) {
  for (int i = 0; i < kBatch; ++i) issue();  // warm-up
  drain(stream);
  std::vector<double> wall;
  std::vector<double> cpu;
  for (int done = 0; done < kHostCalls; done += kBatch) {
    const auto t0 = Clock::now();
    const double c0 = thread_cpu_us();
    for (int i = 0; i < kBatch; ++i) issue();
    cpu.push_back((thread_cpu_us() - c0) / kBatch);
    wall.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / kBatch);
    drain(stream);
  }
  return {median(wall), median(cpu)};
}

// Device milliseconds of `issue` between two events on the stream, median of `reps`.
template <class Issue>
double device_ms(cudaStream_t stream, int reps, Issue&& issue) {
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  api().cudaEventCreateWithFlags(&start, cudaEventDefault);
  api().cudaEventCreateWithFlags(&stop, cudaEventDefault);
  issue();
  drain(stream);
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    api().cudaEventRecord(start, stream);
    issue();
    api().cudaEventRecord(stop, stream);
    wait_event(stop);
    float elapsed = 0;
    api().cudaEventElapsedTime(&elapsed, start, stop);
    ms.push_back(elapsed);
  }
  api().cudaEventDestroy(start);
  api().cudaEventDestroy(stop);
  return median(ms);
}

bool host_only = false;      // --host-only
ncclUniqueId blocking_id{};  // --ranks N > 1: the id of the blocking communicator beside ours

void bench(Communicator& world) {
  auto& comm = dynamic_cast<twinccl::nccl::NcclCommunicator&>(world);
  const ncclComm_t raw = comm.native_comm();
  const cudaStream_t stream = comm.native_stream();

  const std::size_t small = 64;  // float32 elements: 256 B
  twinccl::Buffer a = world.alloc(small, DataType::float32);
  twinccl::Buffer b = world.alloc(small, DataType::float32);
  // The communicator is non-blocking: a call answered ncclInProgress is polled until queued (NCCL's
  // rule), on the direct path too; the backend does the same.
  auto settle = [&](ncclResult_t rc) {
    ncclResult_t state = rc;
    while (state == ncclInProgress) api().ncclCommGetAsyncError(raw, &state);
  };
  const HostCost nccl = host_us_per_call(stream, [&] {
    settle(api().ncclAllReduce(a.data(), b.data(), small, ncclFloat32, ncclSum, raw, stream));
  });
  const HostCost ours = host_us_per_call(stream, [&] {
    world.all_reduce(a.data(), b.data(), small, DataType::float32, ReduceOp::sum(),
                     {.async_op = true});
  });
  // What the default ordering costs by itself: NCCL behind an event recorded on the legacy default
  // stream (the caller's, unless set_caller_stream), as torch's ProcessGroupNCCL orders its calls.
  cudaEvent_t order = nullptr;
  api().cudaEventCreateWithFlags(&order, cudaEventDisableTiming);
  const HostCost nccl_ordered = host_us_per_call(stream, [&] {
    api().cudaEventRecord(order, nullptr);
    api().cudaStreamWaitEvent(stream, order, 0);
    settle(api().ncclAllReduce(a.data(), b.data(), small, ncclFloat32, ncclSum, raw, stream));
  });
  api().cudaEventDestroy(order);
  // The caller works on the communicator's own stream: no ordering event is needed.
  world.set_caller_stream(stream);
  const HostCost ours_same_stream = host_us_per_call(stream, [&] {
    world.all_reduce(a.data(), b.data(), small, DataType::float32, ReduceOp::sum(),
                     {.async_op = true});
  });
  world.set_caller_stream(nullptr);

  // Several ranks: NCCL launches a non-blocking communicator's group (every collective outside a
  // group is one) on a thread of its own and answers ncclInProgress (src/group.cc,
  // ncclGroupEndInternal: groupLaunchNonBlocking), which a caller must poll; nccl-tests uses
  // blocking communicators. TwinCCL's are non-blocking (abortable init, split and finalize), so the
  // same call on a blocking communicator of the same ranks shows what that costs per call.
  HostCost nccl_blocking;
  if (world.size() > 1) {
    ncclComm_t blocking = nullptr;
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;  // blocking (the default)
    if (api().ncclCommInitRankConfig(&blocking, world.size(), blocking_id, world.rank(), &config) !=
        ncclSuccess) {
      std::printf("bench_nccl_overhead: rank %d: ncclCommInitRankConfig (blocking) failed\n",
                  world.rank());
      std::exit(1);
    }
    nccl_blocking = host_us_per_call(stream, [&] {
      api().ncclAllReduce(a.data(), b.data(), small, ncclFloat32, ncclSum, blocking, stream);
    });
    drain(stream);
    (void)api().ncclCommFinalize(blocking);
    (void)api().ncclCommDestroy(blocking);
  }
  if (world.rank() != 0) return;

  auto verdict = [](double us) { return us < 1.0 ? "met" : "NOT met"; };
  std::printf("%s\n", twinccl::nccl::describe_runtime().c_str());
  if (world.size() == 1) {
    std::printf(
        "world size 1: NCCL's one-rank path (a device copy, no collective kernel) is what is "
        "measured\n");
  } else {
    std::printf(
        "world size %d (rank 0's figures); both paths use TwinCCL's non-blocking "
        "communicator\n",
        world.size());
  }
  std::printf(
      "host per call, all_reduce 256 B (median of %d batches of %d): ncclAllReduce %.3f us, "
      "twinccl %.3f us, overhead %.3f us (target < 1 us: %s)\n",
      kHostCalls / kBatch, kBatch, nccl.wall_us, ours.wall_us, ours.wall_us - nccl.wall_us,
      verdict(ours.wall_us - nccl.wall_us));
  std::printf(
      "  the same in the calling thread's CPU time: ncclAllReduce %.3f us, twinccl %.3f us, "
      "overhead %.3f us (target < 1 us: %s)\n",
      nccl.cpu_us, ours.cpu_us, ours.cpu_us - nccl.cpu_us, verdict(ours.cpu_us - nccl.cpu_us));
  std::printf(
      "  of which ordering after the caller's stream (event on the legacy stream + stream wait): "
      "ncclAllReduce so ordered %.3f us (+%.3f us; CPU +%.3f us)\n",
      nccl_ordered.wall_us, nccl_ordered.wall_us - nccl.wall_us, nccl_ordered.cpu_us - nccl.cpu_us);
  std::printf(
      "  twinccl with set_caller_stream(the communicator's stream), no ordering event: %.3f us, "
      "overhead %.3f us (CPU %.3f us; target < 1 us: %s)\n",
      ours_same_stream.wall_us, ours_same_stream.wall_us - nccl.wall_us,
      ours_same_stream.cpu_us - nccl.cpu_us, verdict(ours_same_stream.wall_us - nccl.wall_us));
  if (world.size() > 1) {
    std::printf(
        "  ncclAllReduce on a blocking communicator of the same ranks (as nccl-tests): %.3f us "
        "(CPU %.3f us); twinccl over it: %.3f us\n",
        nccl_blocking.wall_us, nccl_blocking.cpu_us, ours.wall_us - nccl_blocking.wall_us);
  }
  if (host_only) return;

  const std::size_t big = (std::size_t{256} << 20) / sizeof(float);
  twinccl::Buffer x = world.alloc(big, DataType::float32);
  twinccl::Buffer y = world.alloc(big, DataType::float32);
  const double nccl_ms = device_ms(stream, 20, [&] {
    api().ncclAllReduce(x.data(), y.data(), big, ncclFloat32, ncclSum, raw, stream);
  });
  const double ours_ms = device_ms(stream, 20, [&] {
    world.all_reduce(x.data(), y.data(), big, DataType::float32, ReduceOp::sum(),
                     {.async_op = true});
  });

  const double device_overhead_pct = 100.0 * (ours_ms - nccl_ms) / nccl_ms;
  std::printf(
      "device time, all_reduce 256 MiB (median of 20): ncclAllReduce %.3f ms, twinccl %.3f ms, "
      "overhead "
      "%.2f %% (target < 2 %%: %s)\n",
      nccl_ms, ours_ms, device_overhead_pct, device_overhead_pct < 2.0 ? "met" : "NOT met");
}

}  // namespace

int main(int argc, char** argv) {
  int ranks = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--host-only") {
      host_only = true;
    } else if (arg == "--ranks" && i + 1 < argc && std::atoi(argv[i + 1]) >= 1) {
      ranks = std::atoi(argv[++i]);
    } else {
      std::printf(
          "usage: bench_nccl_overhead [--host-only] [--ranks N]\n"
          "  --ranks N: N ranks as threads, one per GPU, or all on GPU 0 when there are fewer\n"
          "  (NCCL >= 2.30 with NCCL_MULTI_RANK_GPU_ENABLE=1)\n");
      return 2;
    }
  }
  const int gpus = twinccl::nccl::visible_gpu_count();
  if (gpus == 0) {
    std::printf("SKIPPED: no GPU visible; nothing measured\n");
    return 77;
  }
  std::vector<int> devices;
  for (int r = 0; r < ranks; ++r) devices.push_back(gpus >= ranks ? r : 0);
  if (ranks > 1 && api().ncclGetUniqueId(&blocking_id) != ncclSuccess) {
    std::printf("bench_nccl_overhead: ncclGetUniqueId failed\n");
    return 1;
  }
  twinccl::RunOptions options;
  options.backend = "nccl";
  twinccl::nccl::run_local_ranks(devices, options, bench);
  return 0;
}

#else

int main() {
  std::printf("SKIPPED: built without NCCL (TWINCCL_HAVE_NCCL undefined); nothing measured\n");
  return 77;
}

#endif
