// One owner of the network slot window (sim/src/net_window.cc slot_window_us): a net connection
// passes at most NCCL_STEPS = 8 messages per (slot round trip + one message's wire time + the
// sending GPU's write of it), for the tree, the NVLS-tree's network part and the ring alike; on
// aws-ofi-nccl's RDMA protocol (p5, the `efa` class) the round trip is the class's 83.5 us
// (network_class.h, fitted on the five p5 all_gather 32 MiB rows) above the 8 KiB eager size.
// docs/fidelity.md, "one owner of the slot window" and "the slot cycle counts the GPU's write".
#include <catch2/catch.hpp>
#include <cmath>

#include "../../sim/src/model.h"
#include "../../sim/src/network_class.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

struct Call {
  detail::TopologyView v;
  detail::ChannelPlan launched;
  double bandwidth_us;  // bytes / NCCL's algbw as the call runs
};

Call call_on(const char* preset, detail::NcclAlgo algo, Protocol protocol, double bytes) {
  const topo::Topology t = topo::load_topology(preset);
  Call c{detail::view_of(t, t.gpu_count()), {}, 0.0};
  c.launched =
      detail::nccl_launched_channels(c.v, detail::nccl_channels(c.v, 0), algo, protocol, bytes);
  c.bandwidth_us = bytes / (1000.0 * detail::nccl_algbw_gbps(c.v, c.launched, algo, protocol,
                                                             OpKind::all_reduce, bytes, true));
  return c;
}

// The efa class's slot round trip, as every test here reads it (one owner: network_class.h).
double round_trip_us() {
  return detail::network_terms(topo::NetworkClass::efa).rdma_slot_round_trip_us;
}

}  // namespace

// The fitted value itself, pinned so that a refit is a deliberate change: least squares of the
// relative errors of the five p5 all_gather 32 MiB rows (aws-efa.csv, "fit:"), scanned in 0.5 us
// steps with the slot cycle below (85 us before the cycle counted the GPU's write).
TEST_CASE("slot window: p5's slot round trip is the fitted 83.5 us") {
  CHECK(round_trip_us() == 83.5);
}

// 32 p5 nodes, all_reduce 32 MiB tree/LL128 on 8 channels: enqueue.cc halves the LL128 chunk while
// 4 MiB a channel / chunk < (1 + 5 + 0.8) x 64 / 8, down to 72000 bytes (below 131072): 59 chunks
// a connection. The 51 / 8 windows after the first each take the 83.5 us round trip, one chunk's
// 76800 wire bytes at 384 / 8 GB/s (1.6 us; a p5 node's NICs held to its 8 GPUs' PCIe Gen5, 8 x
// 48 GB/s) and the GPU's write of the chunk (1/59 of the bandwidth time, 7.2 us): 578.9 us, less
// the bandwidth time. Without the wire time (the tree's old form) or the GPU's write (the form
// before the slotgpu round, 532.7 us) this fails.
TEST_CASE("slot window: a tree connection's windows take the round trip, the wire and the write") {
  const double bytes = 32.0 * 1024 * 1024;
  const auto tree = detail::NcclAlgo::tree;
  const Call c = call_on("aws-p5-32", tree, Protocol::ll128, bytes);
  REQUIRE(c.launched.channels == 8);
  REQUIRE(detail::nccl_tree_chunk_bytes(c.v, Protocol::ll128, bytes, 8) == 72000.0);
  const double window_us =
      (59.0 - 8.0) / 8.0 *
      (round_trip_us() + 76800.0 / (1000.0 * 384.0 / 8.0) + c.bandwidth_us / 59.0);
  INFO("window " << window_us << " us, bandwidth " << c.bandwidth_us << " us");
  REQUIRE(window_us > c.bandwidth_us);
  const double wait_us = detail::net_window_wait_us(c.v, tree, Protocol::ll128, OpKind::all_reduce,
                                                    bytes, c.launched, detail::NvlsSteps{});
  CHECK(wait_us == Approx(window_us - c.bandwidth_us).epsilon(1e-9));
}

// The NVLS-tree's network hop is the same net transport (NVIDIA/nccl v2.27.7-1
// src/transport/nvls.cc:210-211: nvls.treeUp / treeDown through ncclTransportP2pConnect), one
// connection per channel and head (128 on a p5 node), one chunk a loop. With chunks small enough
// for the window to bind (16 KiB, 256 MiB: 128 a connection) it pays the same owner's window:
// 120 / 8 x (83.5 us + 16 KiB at 384 / 128 GB/s + the GPU's write of 1/128 of the bandwidth
// time). At NCCL's own chunk (enqueue.cc's halving with
// aws-ofi-nccl's 512 KiB) the 2-node 64 MiB - 1 GiB calls pay none: 4 / 8 / 16 / 32 chunks of
// 128 / 128 / 128 / 256 KiB, whose wire time lets 8 slots outrun the round trip.
TEST_CASE("slot window: the NVLS-tree's network connections take the same window") {
  const auto nvls_tree = detail::NcclAlgo::nvls_tree;
  const double bytes = 256.0 * 1024 * 1024;
  const Call c = call_on("aws-p5-2", nvls_tree, Protocol::simple, bytes);
  detail::NvlsSteps steps = detail::nccl_nvls_steps(c.v, nvls_tree, bytes);
  REQUIRE(steps.ops == 128.0);
  CHECK(steps.chunk_bytes == 131072.0);
  CHECK(detail::net_window_wait_us(c.v, nvls_tree, Protocol::simple, OpKind::all_reduce, bytes,
                                   c.launched, steps) == 0.0);
  steps.chunk_bytes = 16384.0;
  const double window_us =
      (128.0 - 8.0) / 8.0 *
      (round_trip_us() + 16384.0 / (1000.0 * 384.0 / 128.0) + c.bandwidth_us / 128.0);
  INFO("window " << window_us << " us, bandwidth " << c.bandwidth_us << " us");
  REQUIRE(window_us > c.bandwidth_us);
  CHECK(detail::net_window_wait_us(c.v, nvls_tree, Protocol::simple, OpKind::all_reduce, bytes,
                                   c.launched,
                                   steps) == Approx(window_us - c.bandwidth_us).epsilon(1e-9));
  for (const double mib : {64.0, 128.0, 1024.0}) {
    const double b = mib * 1024 * 1024;
    const Call m = call_on("aws-p5-2", nvls_tree, Protocol::simple, b);
    const detail::NvlsSteps s = detail::nccl_nvls_steps(m.v, nvls_tree, b);
    INFO(mib << " MiB: chunk " << s.chunk_bytes);
    CHECK(detail::net_window_wait_us(m.v, nvls_tree, Protocol::simple, OpKind::all_reduce, b,
                                     m.launched, s) == 0.0);
  }
}

// The NVLS-tree's first chunk up the tree waits for its receiver's control message once per call
// (net_window.cc nvls_tree_first_message_wait_us): the 83.5 us slot round trip less the 23 us
// Simple hop NCCL's latency charges. Not within the 8 KiB eager size (128 connections a p5 node: a
// 512 KiB call's first message is 4 KiB), not on InfiniBand (no slot round trip), not for the tree.
TEST_CASE("slot window: the NVLS-tree's first message waits for the control message once") {
  const auto nvls_tree = detail::NcclAlgo::nvls_tree;
  const auto wait_on = [&](const char* preset, detail::NcclAlgo algo, double bytes) {
    const Call c = call_on(preset, algo, Protocol::simple, bytes);
    const detail::NvlsSteps steps =
        algo == nvls_tree ? detail::nccl_nvls_steps(c.v, algo, bytes) : detail::NvlsSteps{};
    return detail::nvls_tree_first_message_wait_us(c.v, algo, Protocol::simple, OpKind::all_reduce,
                                                   bytes, steps);
  };
  for (const double mib : {64.0, 1024.0}) {
    CHECK(wait_on("aws-p5-2", nvls_tree, mib * 1024 * 1024) == Approx(round_trip_us() - 23.0));
    CHECK(wait_on("aws-p5-32", nvls_tree, mib * 1024 * 1024) == Approx(round_trip_us() - 23.0));
  }
  CHECK(wait_on("aws-p5-2", nvls_tree, 512.0 * 1024) == 0.0);
  CHECK(wait_on("aws-p5-2", nvls_tree, 2.0 * 1024 * 1024) == Approx(round_trip_us() - 23.0));
  CHECK(wait_on("h100-cluster-2", nvls_tree, 64.0 * 1024 * 1024) == 0.0);
  CHECK(wait_on("aws-p5-2", detail::NcclAlgo::tree, 64.0 * 1024 * 1024) == 0.0);
}
