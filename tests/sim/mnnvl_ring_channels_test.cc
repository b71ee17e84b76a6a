// NCCL's ring search across racks reserves each channel's speed on every GPU's NVLink it crosses
// (sim/src/topology_view.cc fit_channels_to_nvlink): in a 64-GPU NVLink domain every one of the
// 16 NIC channels crosses each GPU's NVLink, so 16 x 96 GB/s (GB300's 800G NICs) cannot be had on
// 721.8 GB/s: NCCL keeps the most channels x speed that fits, 16 x 45.1. On 8-GPU nodes 7 of 8
// channels cross a GPU's NVLink: 8 x 48 on an H100 fits (336 <= 370.8) and nothing changes.
#include <catch2/catch.hpp>
#include <string>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
// Ring all_reduce bus bandwidth (GB/s) of 16 GiB on `preset`, without NCCL's latency.
double ring_busbw(const std::string& preset) {
  const topo::Topology t = topo::load_topology(preset);
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = (std::size_t{16} << 30) / 4;
  r.algorithm = "ring";
  r.software_latency = false;
  const double n = t.gpu_count();
  return (std::size_t{16} << 30) / (predict(t, r).time_us * 1e3) * 2.0 * (n - 1.0) / n;
}
}  // namespace

TEST_CASE("ring across NVL72 racks: NCCL's channels fit each GPU's NVLink") {
  CHECK(ring_busbw("gb300-nvl72-cluster-2x64") == Approx(16 * 45.1).epsilon(0.001));
  CHECK(ring_busbw("gb200-nvl72-cluster-2x64") == Approx(16 * 45.1).epsilon(0.001));
  CHECK(ring_busbw("gb200-nvl72-cluster-2x8") == Approx(8 * 48.0).epsilon(0.001));
  CHECK(ring_busbw("h100-cluster-2") == Approx(8 * 48.0).epsilon(0.001));
}
