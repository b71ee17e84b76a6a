// NVLS all_reduce in one Blackwell NVLink domain pays one synchronisation per step, and NCCL's
// chunk falls from 128 KiB to 64 / 32 / 16 KiB as the call gets smaller against channels x heads
// (NVIDIA/nccl v2.28.7-1 src/enqueue.cc:2045-2054), so a middle-size call has more steps per byte
// and runs below NCCL's price (sim/src/analytic_nccl.cc nvls_step_sync_us; docs/fidelity.md, "The
// mid-size ramp in one NVLink domain"). On 8 B200s (gpu-tpu-pedia@d382ada, held out) the run moves
// 297 GB/s between 16 and 64 MiB (32 KiB chunks) and 486 GB/s between 8 and 16 GiB (its job's 512
// KiB NCCL_NVLS_CHUNKSIZE, test_fidelity_nvls_chunk_env.cc; dgx-b200 exports none: 128 KiB, the
// same plateau). The model before this priced both at NCCL's 474 GB/s (ratio 1.0); Hopper keeps
// that.
#include <catch2/catch.hpp>

#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

// GB/s the model gives the bytes between two sizes of a forced NVLS all_reduce.
double marginal_gbps(const topo::Topology& t, std::size_t small, std::size_t large) {
  const double small_us = predict(t, fidelity::all_reduce_request(small, {}, "nvls")).time_us;
  const double large_us = predict(t, fidelity::all_reduce_request(large, {}, "nvls")).time_us;
  return static_cast<double>(large - small) / (1000.0 * (large_us - small_us));
}

constexpr std::size_t kMiB = std::size_t{1} << 20;

}  // namespace

TEST_CASE("NVLS on Blackwell: the middle sizes' smaller chunk costs a synchronisation per step") {
  const topo::Topology b200 = topo::load_topology("dgx-b200");
  const double middle = marginal_gbps(b200, 32 * kMiB, 64 * kMiB);        // 32 KiB chunks
  const double plateau = marginal_gbps(b200, 8192 * kMiB, 16384 * kMiB);  // 128 KiB chunks
  // The 32 MiB between: 70.8 us at NCCL's 474 GB/s, + 4 more steps a channel at 32 KiB chunks x
  // 8.4 us, + 1.9 us of fill: 0.67 of the plateau's rate; measured 297 / 486 = 0.61.
  CHECK(middle / plateau == Approx(0.67).margin(0.04));
  // 64 KiB chunks (128 MiB - 1 GiB): one more step per 25 MB a channel, 0.86; measured 0.89.
  const double upper = marginal_gbps(b200, 256 * kMiB, 1024 * kMiB);
  CHECK(upper / plateau == Approx(0.86).margin(0.04));
  CHECK(upper / plateau > middle / plateau);
}

TEST_CASE("NVLS on Hopper: no step cost, the middle sizes run at NCCL's price") {
  const topo::Topology h100 = topo::load_topology("dgx-h100");
  // 16 - 32 MiB: 32 KiB chunks on 16 channels x 8 heads too (64 MiB already has 64 KiB); the fill
  // grows 2.7 us of 61.7. A guard: the model before passes it too.
  const double middle = marginal_gbps(h100, 16 * kMiB, 32 * kMiB);
  const double plateau = marginal_gbps(h100, 8192 * kMiB, 16384 * kMiB);
  CHECK(middle / plateau > 0.93);
}
