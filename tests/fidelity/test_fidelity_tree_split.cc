// NCCL's tree all_reduce kernel splits a channel's LL128 threads between its two halves: whole
// warps making 70% reduce up the tree, the rest (192 of 640) broadcast down (runTreeSplit,
// NVIDIA/nccl v2.27.7-1 src/device/all_reduce.h:157-165). Every byte passes the broadcast half,
// whose warps move what a ring/LL128 warp does, so on Hopper a tree/LL128 call runs at channels x
// 0.3 x NCCL's ring/LL128 channel cap (36.7 GB/s) where NCCL's tuning prices channels x 29 / 2
// (sim/src/analytic_nccl.cc tree_ll128_split_algbw_gbps; docs/fidelity.md "Issue 24, the tree
// kernel's split"). Checked on the held-out p5 rows (tests/fidelity/figures/aws-efa.csv).
#include <catch2/catch.hpp>

#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

// What 128 MiB more costs from 128 MiB on, without latency or fills: 128 MiB / algbw (NCCL's
// tree correction is the same at 128 and 256 MiB: 1.0 for LL128, 0.9 for Simple).
double slope_us(const topo::Topology& t, Protocol p, const char* algo) {
  const auto bare_us = [&](std::size_t bytes) {
    Request r = fidelity::all_reduce_request(bytes, p, algo);
    r.software_latency = false;
    return predict(t, r).time_us;
  };
  return bare_us(256u << 20) - bare_us(128u << 20);
}

constexpr double kBytes = 128.0 * 1024 * 1024;
// 8 channels (one per 400G rail) x 192 / 640 broadcast threads x 36.7 GB/s.
constexpr double kSplitAlgbwGbps = 8 * 0.3 * 36.7;

}  // namespace

TEST_CASE("tree/LL128 on Hopper runs at its broadcast warps' share of a ring/LL128 channel") {
  // 16 p5 nodes: NCCL's price is 8 x 29 / 2 = 116 GB/s (the old model: 1157 us for 128 MiB); the
  // kernel's broadcast half carries 88.1 GB/s: 1524 us.
  const topo::Topology p5 = topo::load_topology("aws-p5-16");
  CHECK(slope_us(p5, Protocol::ll128, "tree") ==
        Approx(kBytes / (1000.0 * kSplitAlgbwGbps)).epsilon(1e-3));
  // 2 nodes: NCCL's price is 8 x 36.7 / 2 = 146.8 GB/s; the same kernel, the same 88.1 GB/s.
  const topo::Topology p5_2 = topo::load_topology("aws-p5-2");
  CHECK(slope_us(p5_2, Protocol::ll128, "tree") ==
        Approx(kBytes / (1000.0 * kSplitAlgbwGbps)).epsilon(1e-3));
}

TEST_CASE("the split leaves the ring and tree/Simple as NCCL prices them") {
  // ring/LL128 on 16 p5 nodes: 8 x 36.7 busBw, x 128 / 254 algbw (every warp reduces and sends).
  const topo::Topology p5 = topo::load_topology("aws-p5-16");
  CHECK(slope_us(p5, Protocol::ll128, "ring") ==
        Approx(kBytes / (1000.0 * 8 * 36.7 * 128.0 / 254.0)).epsilon(1e-3));
  // tree/Simple (its split is about even and Simple is not bounded per warp): faster than the
  // LL128 split's rate, at NCCL's price min(0.92 x 384, 8 x 36) / 2 x 0.9 = 129.6 GB/s.
  CHECK(slope_us(p5, Protocol::simple, "tree") ==
        Approx(kBytes / (1000.0 * 8 * 36.0 / 2.0 * 0.9)).epsilon(1e-3));
}
