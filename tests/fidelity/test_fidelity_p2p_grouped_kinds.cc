// The p2p network terms of NCCL's grouped send/recv (the EFA completions and the first message's
// wait for aws-ofi-nccl's control message, sim/src/p2p_net_messages.cc) apply to every call the
// direct one-step exchange runs as grouped send/recv, not to all_to_all alone: all_to_all_v
// (as all_to_all, on its matrix), gather (every root batch waits) and scatter (the receivers post
// at the call's start: only the root's first batch waits). Gated on the one-step-exchange trait.
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "../../sim/src/network_class.h"
#include "support/edited_topology.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

using twinccl_test::preset_with;

const std::vector<std::string> kRun = {"p2p_net_chunk_bytes=524288", "nccl_buffsize_bytes=8388608"};
// The efa class's slot round trip (network_class.h, 83.5 us).
const double kRoundTripUs = detail::network_terms(topo::NetworkClass::efa).rdma_slot_round_trip_us;

// `kind` with `peer_bytes` (float) between the root, or every rank, and each peer, direct.
double call_us(const topo::Topology& t, OpKind kind, std::size_t peer_bytes,
               Fidelity fidelity = Fidelity::analytic) {
  Request r;
  r.fidelity = fidelity;
  r.algorithm = "direct";
  r.spec.kind = kind;
  r.spec.nranks = t.gpu_count();
  r.spec.count = peer_bytes / 4;
  if (kind == OpKind::all_to_all_v) {
    const auto n = static_cast<std::size_t>(t.gpu_count());
    r.spec.matrix.assign(n * n, peer_bytes / 4);
  }
  r.gpus_per_thread = 1;
  return predict(t, r).time_us;
}

// The step as a peer's bytes cross the 8 KiB eager size (8 -> 12 KiB: one message a peer at
// both), less the wire's share of it (12 -> 16 KiB): the wait alone.
double eager_step_us(const topo::Topology& t, OpKind kind, Fidelity f = Fidelity::analytic) {
  const double eager = call_us(t, kind, 8192, f);
  const double written = call_us(t, kind, 12288, f);
  const double more = call_us(t, kind, 16384, f);
  return (written - eager) - (more - written);
}

}  // namespace

// 4 p5 nodes: one batch a channel (3 node distances on 3 of the 16 channels). The wait is one
// round trip (83.5 us) less the hop charged, the class's 23 us in both fidelities
// (sim/src/what_if_latency.h; alpha-beta charged NCCL's 14 us table hop before it had one owner).
TEST_CASE("all_to_all_v and scatter over p5 EFA wait for the control message as all_to_all") {
  const topo::Topology p5 = preset_with("aws-p5-4", kRun);
  for (OpKind kind : {OpKind::all_to_all_v, OpKind::scatter, OpKind::gather}) {
    INFO(name(kind));
    CHECK(eager_step_us(p5, kind) == Approx(kRoundTripUs - 23.0).margin(1.0));
    CHECK(eager_step_us(p5, kind, Fidelity::flow) == Approx(kRoundTripUs - 23.0).margin(1.0));
  }
}

// 32 p5 nodes: the busiest channel runs 2 batches (31 node distances over NCCL's 16 p2p
// channels). gather's root posts each batch's receives as it starts (2 round trips less the one
// hop: 144 us); scatter's receivers posted at the start, so only its first batch waits (60.5 us).
TEST_CASE("gather waits per root batch, scatter once") {
  const topo::Topology p5 = preset_with("aws-p5-32", kRun);
  CHECK(eager_step_us(p5, OpKind::gather) == Approx(2.0 * kRoundTripUs - 23.0).margin(1.0));
  CHECK(eager_step_us(p5, OpKind::scatter) == Approx(kRoundTripUs - 23.0).margin(1.0));
}

// A uniform all_to_all_v is all_to_all: the same completions and waits at every size.
TEST_CASE("a uniform all_to_all_v over p5 EFA costs what all_to_all does") {
  const topo::Topology p5 = preset_with("aws-p5-4", kRun);
  for (std::size_t bytes : {4096u, 131072u, 4u << 20}) {
    const double v = call_us(p5, OpKind::all_to_all_v, bytes);
    const double even = call_us(p5, OpKind::all_to_all, bytes);
    CHECK(v == Approx(even).epsilon(0.02));
  }
}
