// The first network message of NCCL's grouped send/recv waits for the receiver's control message
// where the net plugin writes only into a buffer the receiver named (aws-ofi-nccl's RDMA protocol
// on p5, messages above its 8 KiB eager size): one slot round trip (83.5 us, network_class.h) per
// batch of 8 p2p works a channel runs in series, less the ONE network hop the call's latency holds
// in total: the class hop (23 us on p5's Simple), which flow, alpha-beta and sendrecv alike charge
// (sim/src/what_if_latency.h, its one owner; sim/src/p2p_net_messages.cc; docs/fidelity.md
// "Issue 24, the p2p first message's wait (efap2p round)").
#include <catch2/catch.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "../../sim/src/network_class.h"
#include "support/alltoall_time.h"
#include "support/edited_topology.h"
#include "twinccl/sim/p2p.h"
#include "twinccl/sim/timing.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

using twinccl_test::alltoall_us;
using twinccl_test::preset_with;

const std::vector<std::string> kRun = {"p2p_net_chunk_bytes=524288", "nccl_buffsize_bytes=8388608"};
// One batch's wait: the class's round trip less the hop every path charged.
const double kRoundTripUs =
    detail::network_terms(topo::NetworkClass::efa).rdma_slot_round_trip_us;  // 83.5
const double kClassHopUs = 23.0;  // the class's Simple hop

// The step in time as a peer's bytes cross the eager size (8 KiB -> 12 KiB), less the wire's share
// of that step (12 KiB -> 16 KiB: the same one message a peer, 4 KiB more on the wire).
double eager_step_us(const topo::Topology& t, Fidelity fidelity = Fidelity::analytic) {
  const double eager = alltoall_us(t, 8192, fidelity);
  const double written = alltoall_us(t, 12288, fidelity);
  const double more = alltoall_us(t, 16384, fidelity);
  return (written - eager) - (more - written);
}

}  // namespace

// 2 p5 nodes: 8 KiB a peer goes eagerly (no control message to wait for); 12 KiB does not. Both
// are one message a peer (a quarter chunk is 128 KiB), so the completions are the same: the step,
// less the wire's 4 KiB a peer, is the one batch's wait less the hop charged, the same in both
// fidelities (analytic's was 69.5 us while its alpha-beta charged NCCL's 14 us table hop).
TEST_CASE("alltoall over p5 EFA: a message above the eager size waits one slot round trip") {
  const topo::Topology p5 = preset_with("aws-p5-2", kRun);
  CHECK(eager_step_us(p5, Fidelity::analytic) == Approx(kRoundTripUs - kClassHopUs).margin(1.0));
  CHECK(eager_step_us(p5, Fidelity::flow) == Approx(kRoundTripUs - kClassHopUs).margin(1.0));
}

// 32 p5 nodes, 256 ranks: round r's work runs on channel (r / 8) mod p2pnChannels (channel.h
// ncclP2pChannelBaseForRound: one channel per node distance), 8 works a batch. p5's p2pnChannels
// is 16: its graph's 8 channels (one per NIC up to the node's 8 GPUs) doubled by ncclTopoPostset
// (sim/src/p2p_channels.h; a p5 run's NCCL INFO lines show rank 0 -> 8 on channels 0 and 8). 31
// node distances put 2 batches of 8 works on the busiest channel (distances d and d + 16): 2 round
// trips in series, less the one hop the call holds in total (batch 2 starts after batch 1 ends).
// With 8 channels (the model before the p2pcomm round) it was 4 batches, 311 us.
TEST_CASE("alltoall over p5 EFA: one wait per batch a channel runs in series") {
  const topo::Topology p5 = preset_with("aws-p5-32", kRun);
  CHECK(eager_step_us(p5) == Approx(2.0 * kRoundTripUs - kClassHopUs).margin(1.0));
}

// nccl-tests' sendrecv on 2 p5 nodes: ranks 7 -> 8 and 15 -> 0 cross the network, one work a
// batch: one wait, in both fidelities, at the eager step as above. The hop its send is charged is
// the ring/Simple hop with NCCL's plateau factor (analytic_nccl.cc: 23 x 1.4 = 32.2 us from 64
// bytes per channel and rank), so the wait it adds is the round trip less 32.2.
TEST_CASE("sendrecv over p5 EFA: the network send's first message waits once") {
  const topo::Topology p5 = preset_with("aws-p5-2", kRun);
  const Tuner tuner(p5, 16);
  for (Fidelity f : {Fidelity::analytic, Fidelity::flow}) {
    const auto us = [&](double bytes) {
      return predict_p2p(tuner, sendrecv_pattern(16, bytes), f).time_us;
    };
    CHECK((us(12288) - us(8192)) - (us(16384) - us(12288)) ==
          Approx(kRoundTripUs - 32.2).margin(1.0));
  }
}

// NCCL's InfiniBand transport has no control-message wait before a write (and no slot round trip
// in the class): crossing the eager size moves nothing but the wire and the hop's bytes.
TEST_CASE("alltoall over InfiniBand: no first-message wait") {
  const topo::Topology ib = topo::load_topology("h100-cluster-2");
  CHECK(eager_step_us(ib) == Approx(0.0).margin(1.0));
}
