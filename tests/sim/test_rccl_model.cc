// RCCL on one MI300X node (issue 24, sim/src/analytic_rccl.cc): RCCL's latency table, no LL128
// by RCCL's own choice, MSCCL's all-pairs all_reduce with one process per GPU, and the per-call
// launch inside RCCL's base latency. Each expected time is RCCL's constants worked by hand
// (ROCm/rccl@0cbce2a src/graph/tuning.cc, rccl_tuning_table.h); the NVIDIA presets keep NCCL's.
#include <catch2/catch.hpp>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

Prediction all_reduce(const topo::Topology& t, std::size_t bytes, int gpus_per_thread = 1,
                      std::optional<Protocol> protocol = std::nullopt) {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = bytes / 4;  // float32
  r.gpus_per_thread = gpus_per_thread;
  r.protocol = protocol;
  return predict(t, r);
}

}  // namespace

TEST_CASE("RCCL, 8 MI300X: ring/LL at RCCL's latency, the launch inside it (128 B)") {
  // count 32 < 256: no MSCCL. Ring LL: base 12 + 14 hops x 0.8 us over xGMI = 23.2 us; RCCL's
  // ring LL bandwidth (8% of busBw) adds ~0.01 us; no 5 us per-call launch on top.
  const Prediction p = all_reduce(topo::mi300x_8(), 128);
  CHECK(p.algorithm == "ring");
  CHECK(p.protocol == Protocol::ll);
  CHECK(p.time_us == Approx(23.2).margin(0.05));
  // An NVIDIA box keeps NCCL's: 6.6 + 14 x 0.6 = 15 us + 5 us launch.
  CHECK(all_reduce(topo::dgx_h100(), 128).time_us == Approx(20.0).margin(0.05));
}

TEST_CASE("RCCL, 8 MI300X: MSCCL all-pairs from 1 KiB to 16 MiB, one process per GPU only") {
  const topo::Topology t = topo::mi300x_8();
  // LL window: 12 + 2 x 0.8 = 13.6 us + 32 KiB at 336 x 8/14 / 2 = 96 GB/s + its local passes,
  // 4.625 x 32 KiB at 5.3 TB/s x 0.9 (tests/fidelity/test_fidelity_msccl_local_passes.cc).
  const double local_gbps = 5300.0 * 0.9;
  const Prediction ll = all_reduce(t, 32 * 1024);
  CHECK(ll.algorithm == "msccl_allpairs");
  CHECK(ll.protocol == Protocol::ll);
  CHECK(ll.time_us ==
        Approx(13.6 + 32768.0 / 96000.0 + 4.625 * 32768.0 / (1000.0 * local_gbps)).epsilon(1e-6));
  // Simple window: 17 + 2 x 2.1 = 21.2 us + 1 MiB at 192 GB/s + its local passes.
  const Prediction simple = all_reduce(t, 1 << 20);
  CHECK(simple.algorithm == "msccl_allpairs");
  CHECK(simple.protocol == Protocol::simple);
  CHECK(simple.time_us ==
        Approx(21.2 + 1048576.0 / 192000.0 + 4.625 * 1048576.0 / (1000.0 * local_gbps))
            .epsilon(1e-6));
  // Not a whole number of MSCCL's 256-element loops, above its 16 MiB, one thread for 8 GPUs
  // (nccl-tests -g 8: RCCL's mscclCommCompatible wants a process per rank), or 16 ranks: RCCL's
  // tuner.
  CHECK(all_reduce(t, 1020).algorithm == "ring");
  CHECK(all_reduce(t, 32 << 20).algorithm == "ring");
  CHECK(all_reduce(t, 32 * 1024, 8).algorithm == "ring");
  CHECK(all_reduce(topo::mi300x_cluster(2), 32 * 1024).algorithm != "msccl_allpairs");
}

TEST_CASE("RCCL, MI300X: never LL128 by its own choice, one node or more, and forced it runs") {
  for (const topo::Topology& t : {topo::mi300x_8(), topo::mi300x_cluster(2)}) {
    INFO(t.name());
    for (std::size_t bytes = 8; bytes <= (std::size_t{1} << 30); bytes *= 4) {
      INFO(bytes);
      CHECK(all_reduce(t, bytes, 8).protocol != Protocol::ll128);
    }
    CHECK(all_reduce(t, 64 << 20, 1, Protocol::ll128).protocol == Protocol::ll128);
  }
  // NVIDIA keeps LL128 where NCCL's model picks it (8 A100, 8 MiB ring).
  CHECK(all_reduce(topo::dgx_a100(), 8 << 20, 8).protocol == Protocol::ll128);
}

TEST_CASE("RCCL, 8 MI300X: perf --compare lists MSCCL's all-pairs as the choice") {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = 8192;  // 32 KiB
  int choices = 0;
  bool msccl_chosen = false;
  for (const Prediction& p : compare_all(topo::mi300x_8(), r)) {
    choices += p.tuner_choice ? 1 : 0;
    if (p.tuner_choice) msccl_chosen = p.algorithm == "msccl_allpairs";
  }
  CHECK(choices == 1);
  CHECK(msccl_chosen);
}
