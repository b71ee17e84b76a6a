// A Simple ring in one node moves each step's piece in two slices, each waiting on the previous
// rank (NVIDIA/nccl v2.28.7-1 src/device/prims_simple.h:193-194,227-299; chunk and slice steps
// src/include/collectives.h:17-24), where NCCL's latency charges one NVLink hop (3.4 us) per step:
// every pass pays one hop more per step (sim/src/ring_slice_sync.cc; docs/fidelity.md, "The
// mid-size ramp in one NVLink domain" and "Three restrictions audited"). The model before the ramp
// round charged none of it, the one before the special round the first pass only.
#include <catch2/catch.hpp>

#include "../../sim/src/model.h"
#include "all_reduce_request.h"
#include "support/edited_topology.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

// What a forced ring call pays beyond its bandwidth term: NCCL's latency plus the fills.
double fixed_us(const topo::Topology& t, std::size_t bytes, Protocol protocol) {
  return fidelity::fixed_latency_us(t, fidelity::all_reduce_request(bytes, protocol, "ring"));
}

constexpr std::size_t kMiB = std::size_t{1} << 20;

}  // namespace

TEST_CASE("ring/Simple in one node: every pass waits one more hop per step") {
  const topo::Topology a100 = topo::load_topology("dgx-a100");
  // NCCL's latency: 8.4 + 14 x 3.4 = 56 us; the second slice of each of the 14 steps: 47.6 more.
  CHECK(fixed_us(a100, 32 * kMiB, Protocol::simple) == Approx(56.0 + 14.0 * 3.4).epsilon(0.01));
  // 4 GiB on 12 channels (341.33 MiB a channel): 21 full loops of 8 x 2 MiB chunks a channel and a
  // 22nd, 1/3 full, of 5.33 MiB / 8 ranks = 2/3 MiB pieces, each loop's steps waiting twice
  // (all_reduce.h runRing loops, prims_simple.h's slice loop the same in every pass): 21 loops more
  // than at 32 MiB.
  CHECK(fixed_us(a100, 4096 * kMiB, Protocol::simple) -
            fixed_us(a100, 32 * kMiB, Protocol::simple) ==
        Approx(21.0 * 14.0 * 3.4).epsilon(1e-9));
  // A call of exactly 4 full loops (16 channels x 8 ranks x 2 MiB x 4 = 1 GiB on 8 B200s) pays 4,
  // its empty remainder nothing.
  const topo::Topology b200 = topo::load_topology("dgx-b200");
  CHECK(fixed_us(b200, 1024 * kMiB, Protocol::simple) -
            fixed_us(b200, 32 * kMiB, Protocol::simple) ==
        Approx(3.0 * 14.0 * 3.4).epsilon(1e-9));
  // 4 GPUs of a GB200 tray: 6 steps.
  const topo::Topology tray = topo::load_topology("gb200-nvl72-cluster-1x4");
  CHECK(fixed_us(tray, 128 * kMiB, Protocol::simple) == Approx(8.4 + 12.0 * 3.4).epsilon(0.01));
}

TEST_CASE("ring in one node: LL128 and pieces under two slices pay NCCL's latency alone") {
  const topo::Topology a100 = topo::load_topology("dgx-a100");
  // LL128 waits line by line: NCCL's 14 + 14 x 1.9 us only.
  CHECK(fixed_us(a100, 16 * kMiB, Protocol::ll128) == Approx(14.0 + 14.0 * 1.9).epsilon(0.01));
  // 1 MiB on 8 ranks x the launched channels: pieces within one 32 KiB minimum slice, one slice a
  // step.
  CHECK(fixed_us(a100, 1 * kMiB, Protocol::simple) == Approx(8.4 + 14.0 * 3.4).epsilon(0.01));
}

// NCCL_BUFFSIZE sets the Simple step, so the slice (a step's 2/32 at least) follows the run's
// buffer: nccl_simple_step_bytes (sim/src/topology_view.cc) is the one reading of it for the
// slices, the tree's Simple chunk and the p2p chunk's cap. 32 MiB on 8 A100s: pieces of 32 MiB /
// (8 ranks x the launched channels), two slices at NCCL's 4 MiB buffer; with 64 MiB a piece must
// be over one 512 KiB minimum slice, so the same pieces move in one.
TEST_CASE("ring/Simple slices follow the run's NCCL_BUFFSIZE (nccl_buffsize_bytes)") {
  const topo::Topology a100 = topo::load_topology("dgx-a100");
  const topo::Topology a100_64m =
      twinccl_test::with_settings(a100, {"nccl_buffsize_bytes=67108864"});
  CHECK(fixed_us(a100, 32 * kMiB, Protocol::simple) == Approx(56.0 + 14.0 * 3.4).epsilon(0.01));
  CHECK(fixed_us(a100_64m, 32 * kMiB, Protocol::simple) == Approx(56.0).epsilon(0.01));
}

// NCCL's slice rule (prims_simple.h:193-194, nccl_ring_simple_slices in sim/src/model.h): a piece
// over one minimum slice (32 KiB at the 4 MiB buffer) moves in 2 slices, one within it in 1. Until
// this test ring_slice_sync.cc wanted 2 minimum slices (64 KiB) for the second slice (checked: the
// 48 KiB pieces below paid NCCL's latency alone on that code).
TEST_CASE("ring/Simple: a piece over one minimum slice moves in two slices") {
  const topo::Topology a100 = topo::load_topology("dgx-a100");
  const detail::TopologyView v = detail::view_of(a100, 8);
  CHECK(detail::nccl_ring_simple_slices(v, 32.0 * 1024).slices == 1.0);
  CHECK(detail::nccl_ring_simple_slices(v, 33.0 * 1024).slices == 2.0);
  CHECK(detail::nccl_ring_simple_slices(v, 2.0 * kMiB).slices == 2.0);
  CHECK(detail::nccl_ring_simple_slices(v, 2.0 * kMiB).slice_bytes == 1.0 * kMiB);
  // 4.5 MiB on 8 ranks x 12 launched channels: pieces of 48 KiB, 2 slices a step.
  const std::size_t bytes = 9 * kMiB / 2;
  const detail::ChannelPlan launched = detail::nccl_launched_channels(
      v, detail::nccl_channels(v, 0), detail::NcclAlgo::ring, Protocol::simple, bytes);
  REQUIRE(launched.channels == 12);
  CHECK(fixed_us(a100, bytes, Protocol::simple) == Approx(56.0 + 14.0 * 3.4).epsilon(0.01));
}
