// RCCL's LL128 line on AMD GPUs (sim/src/rccl_tuning_table.h kRcclLl128): 64 bytes, 7 data words
// and a flag (ROCm/rccl 0cbce2a src/include/device.h:83-85; NVIDIA's 128 bytes, 15 + 1), 256
// LL128 threads of 28 words a step (:87-88; NVIDIA's 640 x 120), so an LL128 chunk carries
// 28 x 256 x 8 x 7/8 = 50176 data bytes (init.cc:838, enqueue.cc:1845-1851; NVIDIA's 576000).
// NCCL's LL128 factors that stand for its line (tree x 120/128 across nodes, ring x 0.92) take
// RCCL's 56/64 on AMD; the per-channel LL128 caps stay NCCL's (no RCCL source gives its kernel's
// rate). docs/fidelity.md, "RCCL on AMD: LL128's line". The model before this priced NVIDIA's
// line on AMD: 293.6 / 368 GB/s and 72000 / 18000-byte chunks where these checks say otherwise.
#include <catch2/catch.hpp>

#include "../../sim/src/model.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

detail::TopologyView amd_view(const char* preset) {
  const topo::Topology t = topo::load_topology(preset);
  return detail::view_of(t, t.gpu_count());
}

// The same communicator as NVIDIA's Hopper GPUs (the caps the model gives AMD are Hopper's).
detail::TopologyView as_hopper(detail::TopologyView v) {
  v.arch = topo::GpuArch::hopper;
  return v;
}

double bus_gbps(const detail::TopologyView& v, const detail::ChannelPlan& plan,
                detail::NcclAlgo algo) {
  return detail::nccl_bus_bandwidth(v, plan, algo, Protocol::ll128, OpKind::all_reduce);
}

}  // namespace

// 2 x 8 MI355X (AAC14's shape), 8 channels on 8 x 50 GB/s NICs: the tree's busBw before LL128 is
// min(0.92 x 400, 8 x 41.4) = 331.2 GB/s; x 56/64 = 289.8, under the 8 x 36.7 = 293.6 cap, where
// NVIDIA's 120/128 (310.5) leaves the cap binding.
TEST_CASE("RCCL LL128 line: a tree across AMD nodes carries 56 of 64 bytes") {
  const detail::TopologyView v = amd_view("mi355x-roce-2");
  const detail::ChannelPlan plan = detail::nccl_channels(v, 0);
  REQUIRE(plan.channels == 8);
  REQUIRE(0.92 * plan.bus_gbps >= 8 * 41.4);
  CHECK(bus_gbps(v, plan, detail::NcclAlgo::tree) == Approx(8 * 41.4 * 56.0 / 64.0));
  CHECK(bus_gbps(as_hopper(v), plan, detail::NcclAlgo::tree) == Approx(8 * 36.7));
}

// Where the ring's line, not its per-channel cap, binds (16 channels: cap 587 GB/s): NCCL's 0.92
// ("120.0/128.0", tuning.cc) x (56/64) / (120/128) on AMD, 0.92 on NVIDIA.
TEST_CASE("RCCL LL128 line: a ring on AMD GPUs takes RCCL's line in NCCL's 0.92") {
  const detail::TopologyView v = amd_view("mi355x-roce-2");
  detail::ChannelPlan plan = detail::nccl_channels(v, 0);
  plan.channels = 16;
  plan.bus_gbps = 400.0;
  CHECK(bus_gbps(v, plan, detail::NcclAlgo::ring) == Approx(0.92 * 400.0 * 14.0 / 15.0));
  CHECK(bus_gbps(as_hopper(v), plan, detail::NcclAlgo::ring) == Approx(0.92 * 400.0));
}

// enqueue.cc's tree/LL128 chunk from RCCL's 50176-byte step: at 16 MiB on 8 channels no halving
// (41 chunks a channel, >= 2.8 x 16 / 8; the 131072 loop does not start below it); at 1 MiB one
// halving (2 < 5.6) to 25088, no further (not above 32768). NVIDIA's line: 72000 and 18000.
TEST_CASE("RCCL LL128 line: a tree chunk on AMD GPUs is RCCL's step of 50176 data bytes") {
  const detail::TopologyView v = amd_view("mi355x-roce-2");
  CHECK(detail::nccl_tree_chunk_bytes(v, Protocol::ll128, 16 * kMiB, 8) == 50176.0);
  CHECK(detail::nccl_tree_chunk_bytes(v, Protocol::ll128, 1 * kMiB, 8) == 25088.0);
  CHECK(detail::nccl_tree_chunk_bytes(as_hopper(v), Protocol::ll128, 16 * kMiB, 8) == 72000.0);
  CHECK(detail::nccl_tree_chunk_bytes(as_hopper(v), Protocol::ll128, 1 * kMiB, 8) == 18000.0);
  CHECK(detail::protocol_wire_bytes_per_byte(v, Protocol::ll128) == Approx(64.0 / 56.0));
  CHECK(detail::protocol_wire_bytes_per_byte(as_hopper(v), Protocol::ll128) ==
        Approx(128.0 / 120.0));
}
