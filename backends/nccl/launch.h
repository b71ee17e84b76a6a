// The NCCL side of twinccl::run(): bootstrap, communicators, rank threads.
//
//   // backends/run.cc, when options.backend == "nccl":
//   twinccl::nccl::run_world(options, fn);
//
// Under torchrun/srun/mpirun (see twinccl/launch_environment.h) `fn` runs once in this process
// as rank RANK of WORLD_SIZE on GPU LOCAL_RANK % visible GPUs; rank 0 serves the bootstrap store
// at MASTER_ADDR:MASTER_PORT and publishes NCCL's unique id there. Launched alone, `fn` runs on
// one thread per visible GPU (ranks 0..n-1, no store needed). The first failure is rethrown;
// the other rank threads stop with AbortedError instead of hanging.
#pragma once

#include <string>
#include <vector>

#include "twinccl/run.h"

namespace twinccl::nccl {

void run_world(const RunOptions& options, const RankFunction& fn);

// One thread per entry of `devices`: ranks 0..n-1 of one communicator, rank i on devices[i]. A
// device may repeat only where NCCL allows several ranks per GPU (NCCL >= 2.30 with
// NCCL_MULTI_RANK_GPU_ENABLE=1). Used by run_world and by the GPU checks.
void run_local_ranks(const std::vector<int>& devices, const RunOptions& options,
                     const RankFunction& fn);

// What this process can use. A machine without GPU, driver or CUDA libraries is "no GPU"
// (count 0, no_gpu_reason). Anything else that fails - a driver older than the runtime, any other
// cudaGetDeviceCount error - is an `error`: a failure, never a reason to skip.
struct GpuCensus {
  int count = 0;
  std::string no_gpu_reason;       // why count is 0 when error is empty
  std::string error;               // non-empty: CUDA is broken here
  bool libraries_missing = false;  // libcudart/libnccl could not be loaded (see loader.h)
};
GpuCensus gpu_census();
// gpu_census().count: GPUs CUDA can see (0 on "no GPU" and on error).
int visible_gpu_count();
// The NCCL library loaded at run time (ncclGetVersion), and the one compiled against.
int runtime_nccl_version();
int compiled_nccl_version();
// "NCCL 2.28.9 (built with 2.28.9), CUDA runtime 13000, driver 13000, 1 GPU(s)" for logs.
std::string describe_runtime();

}  // namespace twinccl::nccl
