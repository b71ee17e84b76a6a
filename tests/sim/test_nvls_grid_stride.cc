// NVLS on one node before NCCL 2.20.3 is as slow as its busiest channel (sim/src/
// nvls_grid_stride.cc). Figures worked by hand from the layout: 16 channels x 8 heads x a 16 KiB
// chunk below 8 MiB on 8 H100s, so channel 0 carries up to 128 KiB of a call below 2 MiB.
#include <catch2/catch.hpp>
#include <cstddef>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kKiB = 1024, kMiB = 1024 * kKiB;

double nvls_us(const topo::Topology& t, std::size_t bytes, int nccl_version,
               int gpus_per_thread = 0) {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = bytes / 4;
  r.algorithm = "nvls";
  r.nccl_version = nccl_version;
  r.gpus_per_thread = gpus_per_thread;
  return predict(t, r).time_us;
}
}  // namespace

TEST_CASE("NVLS before 2.20.3: a call below one step costs its busiest channel's share",
          "[sim][nvls]") {
  const topo::Topology t = topo::dgx_h100();
  constexpr int v2_18_5 = 21805, v2_19_4 = 21904, v2_20_5 = 22005;
  // 2.18.5, 64 KiB: channel 0 carries all of it, priced as 16 channels x 64 KiB = 1 MiB.
  CHECK(nvls_us(t, 64 * kKiB, v2_18_5) == Approx(nvls_us(t, 1 * kMiB, v2_20_5)));
  // 128 KiB - 2 MiB: channel 0 carries 8 heads x 16 KiB = 128 KiB in each, as a 2 MiB call does.
  for (std::size_t bytes : {128 * kKiB, 512 * kKiB, 2 * kMiB}) {
    CHECK(nvls_us(t, bytes, v2_18_5) == Approx(nvls_us(t, 2 * kMiB, v2_20_5)));
    CHECK(nvls_us(t, bytes, v2_19_4) == Approx(nvls_us(t, bytes, v2_18_5)));
  }
  // 2.20.3 on spreads the call over the channels: 128 KiB costs less than 2 MiB again.
  CHECK(nvls_us(t, 128 * kKiB, v2_20_5) < nvls_us(t, 2 * kMiB, v2_20_5) - 5.0);
  // Whole steps (from 2 MiB): every channel is as busy as the busiest; nothing changes.
  CHECK(nvls_us(t, 64 * kMiB, v2_18_5) == Approx(nvls_us(t, 64 * kMiB, v2_20_5)));
  // Flow plays the same share (flow_nvls.cc) and the same fill: equal to analytic.
  for (std::size_t bytes : {64 * kKiB, 512 * kKiB}) {
    Request flow;
    flow.spec.kind = OpKind::all_reduce;
    flow.spec.count = bytes / 4;
    flow.algorithm = "nvls";
    flow.nccl_version = v2_18_5;
    flow.fidelity = Fidelity::flow;
    CHECK(predict(t, flow).time_us == Approx(nvls_us(t, bytes, v2_18_5)).epsilon(1e-6));
  }
  // The newest model (0) and ring are untouched.
  CHECK(nvls_us(t, 64 * kKiB, 0) == Approx(nvls_us(t, 64 * kKiB, v2_20_5)));
  Request ring;
  ring.spec.kind = OpKind::all_reduce;
  ring.spec.count = 64 * kKiB / 4;
  ring.algorithm = "ring";
  const double ring_new = predict(t, ring).time_us;
  ring.nccl_version = v2_18_5;
  CHECK(predict(t, ring).time_us == Approx(ring_new));
}
