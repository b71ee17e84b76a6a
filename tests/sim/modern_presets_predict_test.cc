// The tuner on today's machines (issue 16): which algorithm NCCL's model picks for a 1 GiB
// all_reduce, and whether the predicted busbw lands in a band around the public figure each
// preset file cites (topologies/presets/*.cc, docs/topologies.md "Presets of today's machines").
// Bands are the project's tolerance (10% from 64 MiB) around the cited figure; the one wider band
// (GB200 NVL72's plateau) is a residual recorded in docs/topologies.md with what was checked.
#include <catch2/catch.hpp>
#include <utility>

#include "support/edited_topology.h"
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

TEST_CASE("tuner on MI300X: never NVLS, never NVLS-tree, forcing NVLS is refused") {
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
  // dgx-h200: as an 8 x H100 node, ~480 GB/s (nccl-tests issue 309); the model's NVLS 476.
  const double h200 = all_reduce(topo::dgx_h200(), kGiB).busbw_gbps;
  CHECK(h200 > 0.9 * 480.0);
  CHECK(h200 < 1.1 * 480.0);
  // dgx-b200: 8 Blackwell GPUs on one NVLink 5 fabric at 1 GiB measured 811 GB/s (GB200 MNNVL,
  // 2 trays, lixueduan.com), 729 (8 B200, gpu-tpu-pedia@d382ada) and 725 (8 GB300 of 2 trays,
  // oci-quickstarts@61eba7f): the band spans the three. At 1 GiB NVLS runs 64 KiB chunks and pays
  // their extra steps (nvls_step_sync_us, docs/fidelity.md "The mid-size ramp in one NVLink
  // domain"): the model 695 GB/s.
  const double b200 = all_reduce(topo::dgx_b200(), kGiB).busbw_gbps;
  CHECK(b200 > 0.9 * 725.0);
  CHECK(b200 < 1.1 * 811.0);
  // gb200-nvl72: see the test below (its plateau at 8 GiB, a recorded residual).
  // mi300x-8: RCCL counts 48 GB/s per xGMI link, 7 links: a ring cannot pass 336 GB/s busbw.
  const double mi300x = all_reduce(topo::mi300x_8(), kGiB).busbw_gbps;
  CHECK(mi300x > 0.75 * 336.0);
  CHECK(mi300x <= 336.0);
  // B200 over H200: NCCL's NVLS price, each of 8 heads at 80 GB/s (9 x 80 <= 721.8) against 40
  // (9 x 40 <= 370.8), less NVLS efficiency (0.74/0.85); at 16 GiB, where both run NCCL's 128 KiB
  // chunk.
  const double b200_16g = all_reduce(topo::dgx_b200(), 16 * kGiB).busbw_gbps;
  const double h200_16g = all_reduce(topo::dgx_h200(), 16 * kGiB).busbw_gbps;
  CHECK(b200_16g / h200_16g == Approx(80.0 * 0.74 / (40.0 * 0.85)).epsilon(0.02));
}

TEST_CASE("cluster presets: busbw bands around the cited multi-node figures") {
  // 248 x 8 H200, 512 MiB: ~350 GB/s, sometimes below 300 (nccl-tests issue 283); the model 320.
  const Prediction h200 = all_reduce(topo::h200_cluster(248), kGiB / 2);
  CHECK(h200.algorithm == "nvls_tree");
  CHECK(h200.busbw_gbps > 0.9 * 350.0);
  CHECK(h200.busbw_gbps < 1.1 * 350.0);
  // 2 x 8 B200, 8 GiB: 690 GB/s (coreweave nccl-tests PR 92); the model 712 (NIC-bound, below).
  const Prediction b200 = all_reduce(topo::b200_cluster(2), 8 * kGiB);
  CHECK(b200.algorithm == "nvls_tree");
  CHECK(b200.busbw_gbps > 0.9 * 690.0);
  CHECK(b200.busbw_gbps < 1.1 * 690.0);
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
  // The bytes term is 720: the time less NCCL's latency (8.4 + 14 x 3.4 us) and the second slice
  // sync of each step in each of the 4 loops (1 GiB / 16 channels of 8 x 2 MiB chunks:
  // 4 x 14 x 3.4 us, ring_slice_sync.cc).
  const double fixed_us = 8.4 + 14 * 3.4 + 4 * 14 * 3.4;
  CHECK(static_cast<double>(kGiB) / (1000.0 * (b200.time_us - fixed_us)) * 14.0 / 8.0 ==
        Approx(720.0).epsilon(1e-9));
  // Across racks one channel per NIC, but no more than NCCL's search makes (16, not 72).
  const Prediction racks = predict(topo::gb200_nvl72_cluster(2), ring);
  CHECK(racks.channels == 16);
}

namespace {
// busbw without NCCL's latency and the NVLS pipeline fill: the bandwidth terms alone.
double plateau_busbw(const topo::Topology& t, std::size_t bytes, const std::string& algorithm) {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = bytes / 4;
  r.algorithm = algorithm;
  r.software_latency = false;
  return predict(t, r).busbw_gbps;
}
}  // namespace

TEST_CASE("NVLS-tree on 2 B200 nodes is NIC-bound, on 2 H100 nodes NCCL's 57.7 cap binds") {
  // 8 NICs x 48 GB/s (NCCL's sm100 inter speed for a 400 Gb/s NIC behind PCIe gen5): each head's
  // NIC carries its S/8 slice once each way, algbw = 8 x 48 = 384 GB/s, busbw x 2(n-1)/n = 720.
  // The NVLS stage runs on NVLink (721.8 / 8 = 90 GB/s a channel, x 0.74 x 7/8 x 2 = 117), not at
  // the NIC's 48 (which gave 48 x 0.74 x 7/8 x 2 = 62 a channel, 497 in all).
  const double n = 16.0;
  CHECK(plateau_busbw(topo::b200_cluster(2), 8 * kGiB, "nvls_tree") ==
        Approx(8 * 48.0 * 2.0 * (n - 1.0) / n).epsilon(1e-6));
  // Hopper: 370.8 / 8 = 46 a channel stays under the NIC's 48; min(71.4, 90, 57.7) x 8 = 461.6.
  CHECK(plateau_busbw(topo::h100_cluster(2), 8 * kGiB, "nvls_tree") ==
        Approx(8 * 57.7).epsilon(1e-6));
  // From 3 nodes the NIC (x 1) binds on Blackwell as before: 8 x 48.
  CHECK(plateau_busbw(topo::b200_cluster(4), 8 * kGiB, "nvls_tree") ==
        Approx(8 * 48.0).epsilon(1e-6));
}

TEST_CASE("NVLS on a GB200 NVL72 rack: 32 heads (NCCL_MAX_NVLS_ARITY), not 72") {
  // NCCL's NVLS graph: 32 head channels, each reserving its speed on every GPU's NVLink and twice
  // on its own (search.cc ncclTopoSearchTryNvls), so 33 x speed <= 721.8: 20 GB/s from the SM100
  // list; tuning.cc busBw = 32 x 20 x 0.74 x 31/32 x 2 (918 GB/s, where 721.8 x 0.74 x 32/33 x
  // 142/72 gave 1021). The old rule (every GPU's NVLink at 0.74 carrying S (1 + 1/32)) was 10%
  // above OCI's GB300 64-GPU plateau (930 busbw at 16 GiB) and 19% above coreweave's 72 GPUs.
  CHECK(plateau_busbw(topo::gb200_nvl72(), 8 * kGiB, "nvls") ==
        Approx(32 * 20.0 * 0.74 * 31.0 / 32.0 * 2.0).epsilon(1e-6));
  // 8 GPUs: every GPU a head, 9 x 80 <= 721.8: 8 x 80 x 0.74 x 7/8 x 2 (831 before: 721.8 / 9 is
  // 80.2, the list's 80 all but reaches it).
  CHECK(plateau_busbw(topo::dgx_b200(), 8 * kGiB, "nvls") ==
        Approx(8 * 80.0 * 0.74 * 7.0 / 8.0 * 2.0).epsilon(1e-6));
  // 8 H100s: 9 x 40 <= 370.8: 8 x 40 x 0.85 x 7/8 x 2 = 476 (490 before; measured 479-481, Azure
  // ND H100/H200 v5 8 GiB, docs/fidelity-sources.md).
  CHECK(plateau_busbw(topo::dgx_h100(), 8 * kGiB, "nvls") ==
        Approx(8 * 40.0 * 0.85 * 7.0 / 8.0 * 2.0).epsilon(1e-6));
}

TEST_CASE("GB200 NVL72 all_reduce: NVLS, its pipeline fill below 8 GiB, a recorded residual") {
  // Published, one rack, 72 GPUs, NVLS on: coreweave nccl-tests PR 43 (NCCL 2.25.1), the only
  // full-rack run found; the repository README's "Single Rack" block is the same log (same host
  // and pid), so it is not a second figure. Its plateau is flat from 4 to 8 GiB: 4 GiB 839.16
  // out of place / 835.32 in place, 8 GiB 834.57 / 846.82; 1 GiB 681 / 724. NCCL picks NVLS:
  // no ring reaches 847 on 721.8 GB/s of NVLink.
  const Prediction p8 = all_reduce(topo::gb200_nvl72(), 8 * kGiB);
  CHECK(p8.algorithm == "nvls");
  // Residual, docs/fidelity.md ("NVL72 racks: NVLS at many GPUs"): the model's plateau is NCCL's
  // NVLS price, 32 heads at 20 GB/s (33 x 20 <= 721.8; it was 721.8 x 0.74 x 32/33, +18..+19%),
  // now +6..+7% (895 vs 834.6..846.8). The band spans the published range: the project's 10%
  // below its low end and above its high end, at both sizes of the plateau (it was 1.2 x above).
  const std::pair<std::size_t, std::pair<double, double>> plateau[] = {
      {4 * kGiB, {835.32, 839.16}}, {8 * kGiB, {834.57, 846.82}}};
  for (const auto& [bytes, range] : plateau) {
    INFO(bytes);
    const double busbw = all_reduce(topo::gb200_nvl72(), bytes).busbw_gbps;
    CHECK(busbw > 0.9 * range.first);
    CHECK(busbw < 1.1 * range.second);
  }
  // The 64 MiB .. 1 GiB ramp (NVLS pipeline fill, 24 channels x 32 heads x enqueue.cc's chunk)
  // applies on the rack: 1 GiB runs below the 8 GiB plateau, 64 MiB further below.
  const double p1 = all_reduce(topo::gb200_nvl72(), kGiB).busbw_gbps;
  const double p64m = all_reduce(topo::gb200_nvl72(), kGiB / 16).busbw_gbps;
  CHECK(p1 < 0.95 * p8.busbw_gbps);
  CHECK(p64m < 0.6 * p8.busbw_gbps);
}

TEST_CASE("NVLS reduce_scatter/all_gather: at most 32 GPUs of one NVLink domain, as NCCL") {
  // enqueue.cc skips NVLS for every collective but all_reduce above NCCL_MAX_NVLS_ARITY (32)
  // local ranks: forcing it on a 72-GPU rack is refused, naming the limit; 32 GPUs may.
  for (OpKind kind : {OpKind::reduce_scatter, OpKind::all_gather}) {
    Request r;
    r.spec.kind = kind;
    r.spec.count = std::size_t{1} << 20;
    r.algorithm = "nvls";
    CHECK_THROWS_WITH(predict(topo::gb200_nvl72(), r),
                      Catch::Contains("NCCL_MAX_NVLS_ARITY") && Catch::Contains("72"));
    r.spec.nranks = 32;
    CHECK(predict(topo::gb200_nvl72(), r).algorithm == "nvls");
  }
}

namespace {
// The same machine with NVLS switched off, as NCCL_NVLS_ENABLE=0 (`--set nvls=0`).
topo::Topology without_nvls(const topo::Topology& t) {
  return twinccl_test::with_settings(t, {"nvls=0"});
}
}  // namespace

TEST_CASE("20 GB200 NVL72 racks as CoreWeave ran them (NVLS off): 512 MiB .. 4 GiB within 10%") {
  // coreweave/nccl-tests PR 48 (20 racks, 1440 GPUs, NCCL 2.26.2, NCCL_NET_GDR_C2C=1), busbw.
  // Its script ran with NCCL_NVLS_ENABLE=0 (commit a736384, "per NV ask, we need to disable NVLS
  // temporarily"; re-enabled in PR 60), so NVLS and NVLS-tree were off: the 733 GB/s NVLS-tree
  // prediction was the wrong comparison. NCCL 2.26.2 enables LL128 only up to a PXN GPU-NIC path
  // (tuning.cc); a Grace-attached NIC is PHB, so LL128 is off across racks and LL never wins from
  // 512 MiB: Simple. The tuner picks among ring and tree, as NCCL would: tree, whose pipeline
  // climbs a chain of 72 GPUs per rack (tree_pipeline_fill.cc) -- the ramp the log shows.
  const topo::Topology racks = without_nvls(topo::gb200_nvl72_cluster(20));
  const std::pair<std::size_t, double> published[] = {
      {kGiB / 2, 150.95}, {kGiB, 218.85}, {2 * kGiB, 286.52}, {4 * kGiB, 346.38}};
  for (const auto& [bytes, busbw] : published) {
    INFO(bytes << " bytes, published " << busbw);
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.count = bytes / 4;
    r.protocol = Protocol::simple;
    const Prediction p = predict(racks, r);
    CHECK(p.algorithm == "tree");
    CHECK(p.busbw_gbps > 0.9 * busbw);
    CHECK(p.busbw_gbps < 1.1 * busbw);
  }
  // With NVLS on (today's recommendation) the model runs NVLS-tree and predicts about twice that.
  CHECK(all_reduce(topo::gb200_nvl72_cluster(20), 4 * kGiB).algorithm == "nvls_tree");
}

TEST_CASE("tree all_reduce pays its pipeline fill: 2 ((ppn-1) + log2 nodes) chunks of 512 KiB") {
  // 20 racks, NVLS off, tree/Simple: 16 channels at NCCL's Blackwell tree cap (24 GB/s each);
  // the call's time over its bandwidth term is NCCL's tree latency, 8.4 + 2 (71 x 4 + 4 x 14) us,
  // plus the fill, 2 (71 + 4) x 512 KiB / 24 GB/s (NCCL's latency alone before the fill).
  const topo::Topology racks = without_nvls(topo::gb200_nvl72_cluster(20));
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = kGiB;  // 4 GiB of float32
  r.algorithm = "tree";
  r.protocol = Protocol::simple;
  const double with_latency = predict(racks, r).time_us;
  r.software_latency = false;
  const double bare = predict(racks, r).time_us;
  const double nccl_latency_us = 8.4 + 2.0 * (71 * 4.0 + 4 * 14.0);
  const double fill_us = 2.0 * (71 + 4) * 512.0 * 1024.0 / (24.0 * 1e3);
  CHECK(with_latency - bare == Approx(nccl_latency_us + fill_us).epsilon(1e-6));
  // A call smaller than one chunk per channel fills with what it has: 1 MiB over 16 channels.
  r.software_latency = true;
  r.spec.count = (std::size_t{1} << 20) / 4;
  const Prediction small = predict(racks, r);
  r.software_latency = false;
  const double small_bare = predict(racks, r).time_us;
  REQUIRE(small.channels == 16);
  const double small_fill_us = 2.0 * (71 + 4) * (1024.0 * 1024.0 / 16) / (24.0 * 1e3);
  CHECK(small.time_us - small_bare == Approx(nccl_latency_us + small_fill_us).epsilon(1e-6));
}

TEST_CASE("8 x MI300X: RCCL's published all_reduce (AMD ROCm blog) within 10% from 64 MiB") {
  // "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X" (AMD, March 2025;
  // rccl-tests, RCCL 2.22.3, ROCm 6.3, mpirun -np 8, out of place): 64 MiB 273.66, 256 MiB
  // 305.62, 1 GiB 314.72, 16 GiB 318.98 GB/s busbw. AMD explains the plateau by the slowest of a
  // GPU's 7 xGMI links (45-48 GB/s measured, 48 as RCCL counts): 7 x 45.2 = 316.
  const std::pair<std::size_t, double> published[] = {
      {kGiB / 16, 273.66}, {kGiB / 4, 305.62}, {kGiB, 314.72}, {16 * kGiB, 318.98}};
  for (const auto& [bytes, busbw] : published) {
    INFO(bytes << " bytes, published " << busbw);
    const Prediction p = all_reduce(topo::mi300x_8(), bytes);
    CHECK(p.algorithm == "ring");
    CHECK(p.busbw_gbps > 0.9 * busbw);
    CHECK(p.busbw_gbps < 1.1 * busbw);
  }
}
