// The tuner on today's machines (issue 16): which algorithm NCCL's model picks for a 1 GiB
// all_reduce, and whether the predicted busbw lands in a band around the public figure each
// preset file cites (topologies/presets/*.cc, docs/topologies.md "Presets of today's machines").
// Bands are wide where the model is known to miss (GB200 NVL72 at 72 ranks, B200 across nodes).
#include <catch2/catch.hpp>

#include "twinccl/errors.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kGiB = std::size_t{1} << 30;

Prediction all_reduce(const topo::Topology& t, std::size_t bytes, std::string algorithm = "") {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = bytes / 4;  // float32
  r.algorithm = std::move(algorithm);
  return predict(t, r);
}
}  // namespace

TEST_CASE("tuner on one NVSwitch node: NVLS for 1 GiB on H200, B200 and a GB200 NVL72 rack") {
  for (const topo::Topology& t : {topo::dgx_h200(), topo::dgx_b200(), topo::gb200_nvl72()}) {
    INFO(t.name());
    CHECK(all_reduce(t, kGiB).algorithm == "nvls");
  }
}

TEST_CASE("tuner on MI300X: never NVLS, never NVLS-tree; forcing NVLS is refused") {
  for (const topo::Topology& t : {topo::mi300x_8(), topo::mi300x_cluster(2)}) {
    INFO(t.name());
    for (std::size_t bytes : {std::size_t{1024}, std::size_t{1} << 20, kGiB}) {
      const Prediction p = all_reduce(t, bytes);
      CHECK(p.algorithm != "nvls");
      CHECK(p.algorithm != "nvls_tree");
    }
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.count = kGiB / 4;
    for (const Prediction& p : compare_all(t, r)) {
      CHECK(p.algorithm != "nvls");
      CHECK(p.algorithm != "nvls_tree");
    }
  }
  CHECK_THROWS_AS(all_reduce(topo::mi300x_8(), kGiB, "nvls"), InvalidArgument);
  CHECK(all_reduce(topo::mi300x_8(), kGiB).algorithm == "ring");
}

TEST_CASE("predicted 1 GiB all_reduce busbw of single machines lands near the cited figures") {
  // dgx-h200: as an 8 x H100 node, ~480 GB/s (nccl-tests issue 309); the model's NVLS 490.
  const double h200 = all_reduce(topo::dgx_h200(), kGiB).busbw_gbps;
  CHECK(h200 > 0.9 * 480.0);
  CHECK(h200 < 1.1 * 480.0);
  // dgx-b200: 8 Blackwell GPUs on one NVLink 5 fabric measured 811 GB/s (GB200 MNNVL, 2 trays).
  const double b200 = all_reduce(topo::dgx_b200(), kGiB).busbw_gbps;
  CHECK(b200 > 0.9 * 811.0);
  CHECK(b200 < 1.1 * 811.0);
  // gb200-nvl72: 72 GPUs measured 681-724 GB/s at 1 GiB and 835-847 at 4-8 GiB (coreweave
  // nccl-tests PR 43). NCCL's NVLS model (0.74 efficiency) reaches ~1040: above the measured
  // plateau by ~23%; the band keeps that known miss from growing.
  const double nvl72 = all_reduce(topo::gb200_nvl72(), kGiB).busbw_gbps;
  CHECK(nvl72 > 681.0);
  CHECK(nvl72 < 1.25 * 847.0);
  // mi300x-8: RCCL counts 48 GB/s per xGMI link, 7 links: a ring cannot pass 336 GB/s busbw.
  const double mi300x = all_reduce(topo::mi300x_8(), kGiB).busbw_gbps;
  CHECK(mi300x > 0.75 * 336.0);
  CHECK(mi300x <= 336.0);
  // B200 over H200: twice the NVLink per link (40.1 vs 20.6), less NVLS efficiency (0.74/0.85).
  CHECK(b200 / h200 == Approx(40.1 * 0.74 / (20.6 * 0.85)).epsilon(0.02));
}

TEST_CASE("cluster presets: busbw bands around the cited multi-node figures") {
  // 248 x 8 H200, 512 MiB: ~350 GB/s, sometimes below 300 (nccl-tests issue 283).
  const Prediction h200 = all_reduce(topo::h200_cluster(248), kGiB / 2);
  CHECK(h200.algorithm == "nvls_tree");
  CHECK(h200.busbw_gbps > 0.8 * 350.0);
  CHECK(h200.busbw_gbps < 1.15 * 350.0);
  // 2 x 8 B200, 8 GiB: 690 GB/s (coreweave nccl-tests PR 92). The model caps NVLS-tree at one
  // channel per NIC (48 GB/s each, x 0.74 x 7/8 x 2) and predicts ~500: 28% low, as recorded in
  // docs/topologies.md.
  const double b200 = all_reduce(topo::b200_cluster(2), 8 * kGiB).busbw_gbps;
  CHECK(b200 > 0.7 * 690.0);
  CHECK(b200 < 1.15 * 690.0);
  // Racks of GB200 NVL72: NVLink-bound inside a rack, 72 NICs of 48 GB/s each across racks; the
  // multi-rack busbw stays under one GPU's NVLink figure x 2 (NVLS) and above the NIC-bound ring.
  const Prediction racks = all_reduce(topo::gb200_nvl72_cluster(4), kGiB);
  CHECK(racks.algorithm != "nvls");
  CHECK(racks.busbw_gbps > 300.0);
  CHECK(racks.busbw_gbps < 2 * 721.8);
}

TEST_CASE("Blackwell rows of NCCL's tables: SM100 speeds and the channel cap across racks") {
  // 721.8 GB/s: sm100's list fits 8 x 90 GB/s, doubled to 16 x 45 (Hopper's would give 24 x 30).
  Request ring;
  ring.spec.kind = OpKind::all_reduce;
  ring.spec.count = kGiB / 4;
  ring.algorithm = "ring";
  ring.protocol = Protocol::simple;
  const Prediction b200 = predict(topo::dgx_b200(), ring);
  CHECK(b200.channels == 16);
  CHECK(b200.busbw_gbps < 720.0);
  CHECK(b200.busbw_gbps > 0.97 * 720.0);
  // Across racks one channel per NIC, but no more than NCCL's search makes (16, not 72).
  const Prediction racks = predict(topo::gb200_nvl72_cluster(2), ring);
  CHECK(racks.channels == 16);
}
