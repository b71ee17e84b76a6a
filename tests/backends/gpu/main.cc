// gpu_checks: runs the [gpu] test cases of test_nccl_gpu.cc, or exits 77 (CTest: "Skipped") when
// no GPU is visible. Two-ranks-per-GPU checks are left out, with a message, before NCCL 2.30.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>

#include "nccl/launch.h"

int main(int argc, char** argv) {
  if (twinccl::nccl::visible_gpu_count() == 0) {
    std::printf("SKIPPED: no GPU (cudaGetDeviceCount failed or returned 0); the NCCL backend was not tested\n");
    return 77;
  }
  std::printf("gpu_checks: %s\n", twinccl::nccl::describe_runtime().c_str());
  Catch::Session session;
  if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
  if (session.configData().testsOrTags.empty()) {
    std::string spec = "[gpu]";
    if (twinccl::nccl::runtime_nccl_version() < 23000) {
      spec += "~[multi_rank]";
      std::printf("SKIPPED: two ranks on one GPU need NCCL >= 2.30 (NCCL_MULTI_RANK_GPU_ENABLE); this is %d\n",
                  twinccl::nccl::runtime_nccl_version());
    }
    session.configData().testsOrTags.push_back(spec);
  }
  return session.run();
}
