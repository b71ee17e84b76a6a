// gpu_checks: the [gpu] test cases of test_nccl_gpu.cc on a real GPU.
//
//   gpu_checks                  one-rank checks; exit 77 (CTest "Skipped") when there is no GPU
//   gpu_checks --multi-rank     two ranks on one GPU; exit 77 unless NCCL >= 2.30
//
// Honest results: "no GPU" (no device, no driver, no CUDA libraries) prints SKIPPED and exits 77,
// never 0; any other CUDA failure (a driver older than the runtime, any other cudaGetDeviceCount
// error) prints FAILED and exits 1. The multi-rank checks are a separate CTest test
// (backends.gpu_checks_multi_rank), so a skipped multi-rank run is never counted as passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "nccl/launch.h"

int main(int argc, char** argv) {
  std::vector<char*> args;
  bool multi_rank = false;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--multi-rank") == 0)
      multi_rank = true;
    else
      args.push_back(argv[i]);
  }
  const twinccl::nccl::GpuCensus census = twinccl::nccl::gpu_census();
  if (!census.error.empty()) {
    std::printf("FAILED: %s\n", census.error.c_str());
    return 1;
  }
  if (census.count == 0) {
    std::printf("SKIPPED: no GPU (%s); the NCCL backend was not tested\n",
                census.no_gpu_reason.c_str());
    return 77;
  }
  std::printf("gpu_checks: %s\n", twinccl::nccl::describe_runtime().c_str());
  if (multi_rank && twinccl::nccl::runtime_nccl_version() < 23000) {
    std::printf(
        "SKIPPED: two ranks on one GPU need NCCL >= 2.30 (NCCL_MULTI_RANK_GPU_ENABLE); this is %d: "
        "only one-rank paths can run here\n",
        twinccl::nccl::runtime_nccl_version());
    return 77;
  }
  Catch::Session session;
  if (const int rc = session.applyCommandLine(static_cast<int>(args.size()), args.data()); rc != 0)
    return rc;
  if (session.configData().testsOrTags.empty()) {
    session.configData().testsOrTags.push_back(multi_rank ? "[multi_rank]" : "[gpu]~[multi_rank]");
  }
  return session.run();
}
