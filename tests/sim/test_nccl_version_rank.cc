// The tuner ranks as the log's NCCL version did (Request / Tuner nccl_version,
// sim/src/nccl_version_rank.cc). Expected choices and ranking times are worked by hand from
// NVIDIA/nccl's v2.26.2-1 src/graph/tuning.cc and search.cc for 8 H100s and 8 x 400 Gb/s NICs per
// node (h100-cluster-N): NVLS graph 8 heads, bwIntra 40 (9 x 40 <= 370.8 GB/s of NVLink), bwInter
// 48; tree graph 8 channels x 48 GB/s.
//   4 nodes, NVLS-tree: 8 x min(40, 48 / 2) x 5/6 = 160 GB/s, latency 25 + 2 x 2 x 14 = 81 us;
//   tree/LL128: min(min(8 x 48 x 0.92, 8 x 36.0) x 120/128, 8 x 29.0) / 2 = 116 GB/s x the tree
//   correction (LL128: 0.6 at 1-2 MiB, 0.8 at 4 MiB, 0.9 at 8-32 MiB), latency 14 + 2 (7 x 1.25 +
//   2 x 8.5) = 65.5 us. 1 MiB: tree 80.6 < NVLS-tree 87.6; 2 MiB: NVLS-tree 94.1 < tree 95.6.
//   2 nodes, NVLS-tree: 8 x min(40, 48) x 5/6 = 266.7 GB/s, 25 + 2 x 14 = 53 us; tree/LL128:
//   min(min(353.3, 8 x 41.4) x 120/128, 8 x 36.7) / 2 = 146.8 GB/s, 14 + 2 (8.75 + 8.5) = 48.5 us.
//   512 KiB: tree 54.5 < NVLS-tree 55.0; 1 MiB: NVLS-tree 56.9 < tree 60.4.
#include <catch2/catch.hpp>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr int kNccl2262 = 22602;

std::string choice(const Tuner& t, std::size_t bytes) {
  const Choice c = t.choose(OpKind::all_reduce, bytes / 4, DataType::float32);
  return c.algorithm + "/" + std::string(name(c.protocol));
}
}  // namespace

TEST_CASE("nccl_version_code reads a log's NCCL version", "[sim][tuner][version]") {
  CHECK(nccl_version_code("2.26.2+cuda12.8") == 22602);
  CHECK(nccl_version_code("2.18.5") == 21805);
  CHECK(nccl_version_code("2.28.9") == 22809);
  CHECK(nccl_version_code("") == 0);
  CHECK(nccl_version_code("2.26") == 0);
  CHECK(nccl_version_code("2.8.4") == 0);  // before 2.9 NCCL's code had another form
  CHECK(nccl_version_code("2.100.1") == 0);
  CHECK(nccl_version_code("v2.26.2") == 0);
  CHECK(nccl_version_code("99999999999.1.1") == 0);
}

TEST_CASE("NCCL 2.26.2 ranks NVLS-tree first on 4 nodes from 2 MiB", "[sim][tuner][version]") {
  const topo::Topology t = topo::load_topology("h100-cluster-4");
  const Tuner old(t, 0, 0, true, kNccl2262);
  CHECK(choice(old, kMiB) == "tree/LL128");
  for (std::size_t mib : {2, 4, 8, 16, 32, 64, 128}) {
    INFO(mib << " MiB");
    CHECK(choice(old, mib * kMiB) == "nvls_tree/Simple");
  }
  // Ring/Simple (198.2 GB/s, 395.9 us with the plateau x1.4) overtakes NVLS-tree's 160 GB/s at
  // ~262 MB: 256 MiB on.
  CHECK(choice(old, 256 * kMiB) == "ring/Simple");
  // The newest model (2.28.9 on): NVLS-tree's network hop 20.9 us and 188 GB/s: tree/LL128 up to
  // 8 MiB, NVLS-tree to 512 MiB.
  const Tuner newest(t, 0);
  CHECK(choice(newest, 4 * kMiB) == "tree/LL128");
  CHECK(choice(newest, 8 * kMiB) == "tree/LL128");
  CHECK(choice(newest, 256 * kMiB) == "nvls_tree/Simple");
  // NCCL 2.26.2's ranking time of NVLS-tree, by hand: 81 us + 4 MiB / 160 GB/s.
  const Choice forced = old.choose(OpKind::all_reduce, kMiB, DataType::float32, "nvls_tree");
  CHECK(forced.rank_us == Approx(81.0 + 4.0 * kMiB / 160e3).epsilon(1e-6));
  // Only the ranking follows the version: the call as run is the same.
  const Choice run_new = newest.choose(OpKind::all_reduce, kMiB, DataType::float32, "nvls_tree");
  CHECK(forced.time_us == Approx(run_new.time_us).epsilon(1e-12));
  CHECK(forced.rank_us != Approx(run_new.rank_us));
  // 2.28.0-2.28.8: the newest bandwidth with the 14 us network hop (4 hops on 4 nodes).
  const Tuner v2287(t, 0, 0, true, 22807);
  const Choice mid = v2287.choose(OpKind::all_reduce, kMiB, DataType::float32, "nvls_tree");
  CHECK(mid.rank_us == Approx(run_new.rank_us - 4 * (20.9 - 14.0)).epsilon(1e-9));
}

TEST_CASE("NCCL 2.26.2 ranks NVLS-tree first on 2 nodes from 1 MiB", "[sim][tuner][version]") {
  const topo::Topology t = topo::load_topology("h100-cluster-2");
  const Tuner old(t, 0, 0, true, kNccl2262);
  CHECK(choice(old, 512 * 1024) == "tree/LL128");
  for (std::size_t mib : {1, 2, 4, 8, 16, 1024}) {
    INFO(mib << " MiB");
    CHECK(choice(old, mib * kMiB) == "nvls_tree/Simple");
  }
  const Choice forced = old.choose(OpKind::all_reduce, kMiB / 4, DataType::float32, "nvls_tree");
  CHECK(forced.rank_us == Approx(53.0 + 1.0 * kMiB / (8 * 40 * 5.0 / 6.0 * 1e3)).epsilon(1e-6));
  // The newest model keeps tree/LL128 to 2 MiB (NVLS-tree 66.8 us latency, 246 GB/s).
  const Tuner newest(t, 0);
  CHECK(choice(newest, kMiB) == "tree/LL128");
  CHECK(choice(newest, 2 * kMiB) == "tree/LL128");
  CHECK(choice(newest, 4 * kMiB) == "nvls_tree/Simple");
}

TEST_CASE("a Tuner's nccl_version is checked", "[sim][tuner][version]") {
  const topo::Topology t = topo::load_topology("h100-cluster-2");
  CHECK_THROWS_AS(Tuner(t, 0, 0, true, 2708), InvalidArgument);
  CHECK_THROWS_AS(Tuner(t, 0, 0, true, -1), InvalidArgument);
  CHECK_THROWS_AS(Tuner(t, 0, 0, true, 100000), InvalidArgument);
  CHECK_THROWS_WITH(Tuner(t, 0, 0, true, 2708), Catch::Contains("nccl_version=2708"));
  CHECK(Tuner(t, 0, 0, true, kNccl2262).nccl_version() == kNccl2262);
  // One node: NVLS-tree does not apply, the version changes nothing.
  const topo::Topology one = topo::load_topology("dgx-h100");
  CHECK(choice(Tuner(one, 0, 0, true, kNccl2262), 64 * kMiB) == choice(Tuner(one, 0), 64 * kMiB));
}

// Blackwell from 3 nodes: NCCL's per-channel NVLS-tree cap (perChMaxNVLSTreeBws, N4 column) is
// 43.1 GB/s in v2.28.3-1 / v2.28.7-1, 43.8 in v2.28.9-1 - v2.29.7-1 and 80.0 from v2.30.3-1
// (src/graph/tuning.cc). 8 B200s and 8 x 400 Gb/s NICs a node: the NVLS graph's 8 heads run at the
// NIC speed, 48 GB/s a channel, under 80 but over 43.8. So 2.29 ranks NVLS-tree at 8 x 43.8 where
// ring keeps 8 x 48, and runs ring at 16 GiB on 4 - 46 nodes: Together's use3a-ss report (NCCL
// 2.29.7), whose NCCL's-choice column equals its forced-ring one from 4 nodes
// (tests/fidelity/figures/ib-multinode.csv); 2.30 ranks NVLS-tree first.
TEST_CASE("NCCL 2.28-2.29 rank ring over NVLS-tree on 4+ Blackwell nodes: NVLS-tree's cap",
          "[sim][tuner][version]") {
  constexpr std::size_t kGiB = std::size_t{1} << 30;
  const topo::Topology t = topo::load_topology("b200-cluster-4");
  const Tuner v2297(t, 0, 0, true, 22907), v2287(t, 0, 0, true, 22807), newest(t, 0);
  CHECK(choice(v2297, 16 * kGiB) == "ring/Simple");
  CHECK(choice(newest, 16 * kGiB) == "nvls_tree/Simple");
  // The bandwidth term alone: two sizes from 1 GiB (NCCL's Blackwell x86 correction stops there)
  // difference out the latency, which the cap leaves as it is.
  const auto slope = [](const Tuner& tuner) {
    const auto rank = [&tuner](std::size_t bytes) {
      return tuner.choose(OpKind::all_reduce, bytes / 4, DataType::float32, "nvls_tree").rank_us;
    };
    return rank(16 * kGiB) - rank(kGiB);
  };
  CHECK(slope(v2297) == Approx(slope(newest) * 48.0 / 43.8).epsilon(1e-9));
  CHECK(slope(v2287) == Approx(slope(newest) * 48.0 / 43.1).epsilon(1e-9));
  // NCCL's estimate only: the call as run is the newest model's at every version.
  const Choice run_old = v2297.choose(OpKind::all_reduce, 4 * kGiB, DataType::float32, "nvls_tree");
  const Choice run_new =
      newest.choose(OpKind::all_reduce, 4 * kGiB, DataType::float32, "nvls_tree");
  CHECK(run_old.time_us == Approx(run_new.time_us).epsilon(1e-12));
  // On 2 nodes the cap is 96 in every version: 2.29.7 ranks as the newest there.
  const topo::Topology two = topo::load_topology("b200-cluster-2");
  const Tuner two_v2297(two, 0, 0, true, 22907), two_newest(two, 0);
  CHECK(choice(two_v2297, 16 * kGiB) == "nvls_tree/Simple");
  CHECK(two_v2297.choose(OpKind::all_reduce, 4 * kGiB, DataType::float32, "nvls_tree").rank_us ==
        Approx(
            two_newest.choose(OpKind::all_reduce, 4 * kGiB, DataType::float32, "nvls_tree").rank_us)
            .epsilon(1e-12));
}

// Blackwell's ring/LL128 per-channel cap (perChMaxRingLL128Bws, NVIDIA/nccl src/graph/tuning.cc):
// 2 x 36.7 = 73.4 GB/s at every node count to v2.28.3-1, {73.4, 34.6, 73.4} in v2.28.7-1 /
// v2.28.9-1, {34.5, 34.6, 34.5} in v2.29.2-1 / v2.29.3-1, 40.0 from v2.29.7-1 (kNccl's). On 4
// GB200s of a tray each ring channel carries more than 40 GB/s of NVLink, so NCCL 2.25.1 ranks
// LL128 faster than the newest model does: Azure's ND GB200 v6 run (2.25.1, `-g 4`) takes 76 us at
// 16 MiB, ring/LL128's price (69.7 us, -8%) where ring/Simple's is 89.2 (+17%)
// (tests/fidelity/figures/nvl72.csv).
TEST_CASE("Blackwell ring/LL128 ranks under its NCCL version's per-channel cap",
          "[sim][tuner][version]") {
  const topo::Topology t = topo::load_topology("gb200-nvl72-cluster-1x4");
  const Tuner v2251(t, 0, 0, true, 22501), v2292(t, 0, 0, true, 22902), newest(t, 0);
  CHECK(choice(v2251, 16 * kMiB) == "ring/LL128");
  CHECK(choice(newest, 16 * kMiB) == "ring/Simple");
  const auto slope = [](const Tuner& tuner) {
    const auto rank = [&tuner](std::size_t bytes) {
      return tuner.choose(OpKind::all_reduce, bytes / 4, DataType::float32, "ring", Protocol::ll128)
          .rank_us;
    };
    return rank(64 * kMiB) - rank(16 * kMiB);
  };
  // 2.29.2's 34.5 binds where the newest 40 does; 2.25.1's 73.4 is above the NVLink's share.
  CHECK(slope(v2292) == Approx(slope(newest) * 40.0 / 34.5).epsilon(1e-9));
  CHECK(slope(v2251) < slope(newest));
  // The call as run is the newest model's at every version.
  CHECK(
      v2251.choose(OpKind::all_reduce, kMiB, DataType::float32, "ring", Protocol::ll128).time_us ==
      Approx(newest.choose(OpKind::all_reduce, kMiB, DataType::float32, "ring", Protocol::ll128)
                 .time_us)
          .epsilon(1e-12));
  // Hopper keeps 36.7 in every version: no version term.
  const topo::Topology h = topo::load_topology("dgx-h100");
  CHECK(Tuner(h, 0, 0, true, 22501)
            .choose(OpKind::all_reduce, kMiB, DataType::float32, "ring", Protocol::ll128)
            .rank_us ==
        Approx(Tuner(h, 0)
                   .choose(OpKind::all_reduce, kMiB, DataType::float32, "ring", Protocol::ll128)
                   .rank_us)
            .epsilon(1e-12));
}
