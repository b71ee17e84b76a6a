// NVLS all_reduce at NCCL's own price (sim/src/model.h nvls_all_reduce_algbw_gbps, issue 24's NVLS
// round, docs/fidelity.md "NVL72 racks: NVLS at many GPUs"): NCCL's NVLS graph gives each of its
// heads (at most 32) the fastest speed of the arch's list with (heads + 1) x speed within a GPU's
// NVLink (search.cc ncclTopoSearchTryNvls), and tuning.cc prices busBw = heads x speed x
// efficiency x (heads - 1)/heads x 2. What follows from it, beyond the plateaus the presets'
// test checks: NCCL ranks ring above NVLS on a 4-GPU tray, a calibrated NVLink moves NVLS in
// proportion (the steps are NCCL's view of the link, not the hardware's), and flow agrees.
#include <catch2/catch.hpp>
#include <string>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kGiB = std::size_t{1} << 30;

// algbw (GB/s) of a 1 GiB all_reduce without NCCL's latency and the NVLS fill.
double algbw(const topo::Topology& t, const std::string& algorithm,
             Fidelity f = Fidelity::analytic) {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = kGiB / 4;
  r.algorithm = algorithm;
  r.software_latency = false;
  r.fidelity = f;
  return static_cast<double>(kGiB) / (predict(t, r).time_us * 1e3);
}

topo::Topology with_nvlink(const topo::Topology& t, double gbps) {
  topo::TopologyEdits e;
  e.settings.push_back({"nvlink_gbps", gbps});
  return topo::apply_edits(t, e).topology;
}
}  // namespace

TEST_CASE("NVLS on one 4-GPU GB200 tray: NCCL's list stops at 90 GB/s a head, so ring wins") {
  // 4 heads: 5 x 90 <= 721.8, the list's top; 4 x 90 x 0.74 x 3/4 x 2 x 4/6 = 266 GB/s algbw
  // (the physical 721.8 x 0.74 x 4/5 = 427 made NVLS NCCL's choice at 8 MiB on OCI's GB300 tray,
  // +25% there; the run is a ring's, as Azure's ND GB200 v6 page says).
  const topo::Topology tray = topo::gb200_nvl72_partial(1, 4);
  CHECK(algbw(tray, "nvls") == Approx(4 * 90.0 * 0.74 * 3.0 / 4.0 * 2.0 * 4.0 / 6.0).epsilon(1e-6));
  Request r;
  r.spec.kind = OpKind::all_reduce;
  for (std::size_t bytes : {std::size_t{8} << 20, kGiB}) {
    r.spec.count = bytes / 4;
    INFO(bytes);
    CHECK(predict(tray, r).algorithm == "ring");
  }
}

TEST_CASE("NVLS at NCCL's price scales with a calibrated NVLink, without NCCL's speed steps") {
  // 72 GPUs: 33 x 20 <= 721.8 (20 GB/s a head). A search on 90% of that link would step to 19
  // (33 x 20 = 660 > 649.6); the model reads the steps on NCCL's view of the link (18 x 40.1,
  // which a calibrated rate does not change) and scales by the topology's rate: exactly 90%.
  const topo::Topology rack = topo::gb200_nvl72();
  const double full = algbw(rack, "nvls");
  CHECK(full == Approx(32 * 20.0 * 0.74 * 31.0 / 32.0 * 2.0 * 72.0 / 142.0).epsilon(1e-6));
  CHECK(algbw(with_nvlink(rack, 0.9 * 721.8), "nvls") == Approx(0.9 * full).epsilon(1e-6));
  // 8 H100s likewise: 9 x 40 <= 370.8, 272 GB/s, 80% of the link gives 80% of that.
  const topo::Topology h100 = topo::dgx_h100();
  const double h = algbw(h100, "nvls");
  CHECK(h == Approx(8 * 40.0 * 0.85 * 7.0 / 8.0 * 2.0 * 8.0 / 14.0).epsilon(1e-6));
  CHECK(algbw(with_nvlink(h100, 0.8 * 370.8), "nvls") == Approx(0.8 * h).epsilon(1e-6));
}

TEST_CASE("NVLS at NCCL's price: flow's switch flows give analytic's time on a rack") {
  for (const topo::Topology& t : {topo::gb200_nvl72(), topo::gb200_nvl72_partial(1, 64)}) {
    INFO(t.name());
    // Within 0.1%: flow also crosses the NVLink's wire latency (a few tenths of a us).
    CHECK(algbw(t, "nvls", Fidelity::flow) == Approx(algbw(t, "nvls")).epsilon(1e-3));
  }
}
