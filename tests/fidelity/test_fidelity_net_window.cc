// NCCL's network window (sim/src/net_window.cc): a net connection has NCCL_STEPS = 8 buffer slots,
// so a tree all_reduce whose connection carries more than 8 of enqueue.cc's chunks waits a network
// round trip per 8 more. Checked on the held-out p4de row it moves (tests/fidelity/figures/
// aws-efa.csv, awsome-distributed-training@88c2e71b, 8 MiB: 762.8 us; docs/fidelity.md "Issue 24,
// network window").
#include <catch2/catch.hpp>
#include <cmath>

#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

Prediction all_reduce(const topo::Topology& t, std::size_t bytes, Protocol protocol) {
  return predict(t, fidelity::all_reduce_request(bytes, protocol));
}

}  // namespace

// 2 x p4de, 8 MiB tree/LL128 on 4 channels: enqueue.cc halves the LL128 chunk (576000 data bytes)
// to 72000, so each channel's 2 MiB is 30 chunks: (30 - 8) / 8 windows after the first, each a
// round trip of 2 x (8.5 + 75) us plus one chunk's 76800 wire bytes at 50 / 4 GB/s (6.1 us) plus
// the GPU's write of the chunk (the call's 233 us of bandwidth time over its 30 chunks, 7.8 us;
// the slot is refilled only after its send completed and sent only once written, slot_window_us)
// = 498 us, more than the bandwidth time, on top of the call's latency (the same call at 16 B).
// The model before the window (latency + bytes / bandwidth) said 436.5 us, -43%; without the
// GPU's write (476 us) this fails.
TEST_CASE("network window: p4de 8 MiB tree/LL128 waits (chunks - 8) / 8 round trips") {
  const topo::Topology p4de = topo::load_topology("aws-p4de-2");
  const Prediction big = all_reduce(p4de, 8u << 20, Protocol::ll128);
  const Prediction tiny = all_reduce(p4de, 16, Protocol::ll128);
  INFO(big.algorithm << " " << big.channels << " channels " << big.time_us << " us, 16 B "
                     << tiny.time_us << " us");
  REQUIRE(big.algorithm == "tree");
  const double wire_us = 72000.0 * 128.0 / 120.0 / (1000.0 * 50.0 / 4.0);
  const double write_us = 233.0 / 30.0;
  const double window_us = (30.0 - 8.0) / 8.0 * (2.0 * (8.5 + 75.0) + wire_us + write_us);
  CHECK(std::abs(big.time_us - tiny.time_us - window_us) / window_us < 0.02);
  CHECK(std::abs(big.time_us / 762.8 - 1.0) <= 0.25);
}

// Where a connection carries at most 8 chunks the window costs nothing: p4de 1 MiB (LL128 chunk
// 36000, 256 KiB per channel = 8 chunks) is latency + bytes / bandwidth as before.
TEST_CASE("network window: at most NCCL_STEPS chunks per connection cost nothing") {
  const topo::Topology p4de = topo::load_topology("aws-p4de-2");
  const double one = all_reduce(p4de, 1u << 20, Protocol::ll128).time_us;
  const double two = all_reduce(p4de, 2u << 20, Protocol::ll128).time_us;
  // 2 MiB: chunk 72000, 512 KiB per channel = 8 chunks as well; the rise is bandwidth alone.
  CHECK(two - one < 60.0);
}
