// NCCL's grouped send/recv across nodes, priced by its network messages (sim/src/
// p2p_net_messages.h; docs/fidelity.md "Issue 24, p2p network messages"): an alltoall on EFA
// pays aws-ofi-nccl's 1 us of host time per completion, a send and a receive per message, and
// the message count follows the run's NCCL_P2P_NET_CHUNKSIZE / NCCL_BUFFSIZE, which a topology
// carries as p2p_net_chunk_bytes / nccl_buffsize_bytes (--set, topology files).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "support/alltoall_time.h"
#include "support/edited_topology.h"
#include "twinccl/errors.h"
#include "twinccl/sim/p2p.h"
#include "twinccl/sim/timing.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

using twinccl_test::preset_with;

// nccl-tests' alltoall with `bytes_per_rank` in each rank's buffer (its size column).
double alltoall_rank_us(const topo::Topology& t, std::size_t bytes_per_rank,
                        Fidelity fidelity = Fidelity::analytic) {
  return twinccl_test::alltoall_us(t, bytes_per_rank / static_cast<std::size_t>(t.gpu_count()),
                                   fidelity);
}

const std::vector<std::string> kRun = {"p2p_net_chunk_bytes=524288", "nccl_buffsize_bytes=8388608"};

}  // namespace

// crazyguitar/aws-gpu-communication-benchmark@a77f70d: 32 x p5, 2 GiB alltoall, 52454.4 us with
// NCCL_P2P_NET_CHUNKSIZE 512 KiB. 8 MiB a peer: one part (256 ranks), 16 messages of 512 KiB;
// 248 remote peers: 2 x 248 x 16 completions of 1 us on top of the wire. With NCCL's 128 KiB
// chunk the same call takes 64 messages a peer.
TEST_CASE("alltoall over EFA: 1 us a completion, counted from the run's p2p chunk") {
  const double run = alltoall_rank_us(preset_with("aws-p5-32", kRun), std::size_t{2} << 30);
  // NCCL's own 128 KiB / 4 MiB (the preset carries aws-ofi-nccl's 512 KiB / 8 MiB: aws_efa.h).
  const double nccl_default = alltoall_rank_us(
      preset_with("aws-p5-32", {"p2p_net_chunk_bytes=131072", "nccl_buffsize_bytes=4194304"}),
      std::size_t{2} << 30);
  CHECK(nccl_default - run == Approx(2.0 * 248 * (64 - 16)).epsilon(1e-6));
  CHECK(std::abs(run / 52454.4 - 1.0) <= 0.10);
  // 32 MiB at 2 nodes: 2 MiB a peer in 2 parts of 1 MiB; below 8 chunks a message is half a
  // chunk: 8 messages of 256 KiB a peer, 4 of 512 KiB with a 1 MiB chunk; 8 remote peers.
  const double small_run = alltoall_rank_us(preset_with("aws-p5-2", kRun), std::size_t{32} << 20);
  const double small_1m = alltoall_rank_us(
      preset_with("aws-p5-2", {"p2p_net_chunk_bytes=1048576", "nccl_buffsize_bytes=8388608"}),
      std::size_t{32} << 20);
  CHECK(small_run - small_1m == Approx(2.0 * 8 * (8 - 4)).epsilon(1e-6));
  // The flow fidelity plays the wire and adds the same completions.
  const double flow_run =
      alltoall_rank_us(preset_with("aws-p5-2", kRun), std::size_t{32} << 20, Fidelity::flow);
  const double flow_1m = alltoall_rank_us(
      preset_with("aws-p5-2", {"p2p_net_chunk_bytes=1048576", "nccl_buffsize_bytes=8388608"}),
      std::size_t{32} << 20, Fidelity::flow);
  CHECK(flow_run - flow_1m == Approx(2.0 * 8 * (8 - 4)).epsilon(1e-6));
}

// NCCL_BUFFSIZE bounds the chunk (init.cc: p2pChunkSize <= NCCL_BUFFSIZE / 8): 2 MiB of buffer
// holds 256 KiB chunks, so the run's 512 KiB setting yields 32 messages a peer at 8 MiB.
TEST_CASE("alltoall over EFA: NCCL_BUFFSIZE / 8 caps the p2p chunk") {
  const std::size_t bytes = std::size_t{2} << 30;
  const double run = alltoall_rank_us(preset_with("aws-p5-32", kRun), bytes);
  const double capped = alltoall_rank_us(
      preset_with("aws-p5-32", {"p2p_net_chunk_bytes=524288", "nccl_buffsize_bytes=2097152"}),
      bytes);
  CHECK(capped - run == Approx(2.0 * 248 * (32 - 16)).epsilon(1e-6));
}

// NCCL's own InfiniBand transport has no public per-completion figure: the settings move nothing.
TEST_CASE("alltoall over InfiniBand: no per-completion charge, the settings change nothing") {
  const std::size_t bytes = std::size_t{256} << 20;
  CHECK(alltoall_rank_us(preset_with("h100-cluster-2", kRun), bytes) ==
        alltoall_rank_us(topo::load_topology("h100-cluster-2"), bytes));
}

TEST_CASE("p2p_net_chunk_bytes / nccl_buffsize_bytes: read, checked, kept, written back") {
  const topo::Topology t = preset_with("aws-p5-2", kRun);
  CHECK(t.facts().p2p_net_chunk_bytes == 524288.0);
  const topo::Topology back = topo::topology_from_json(topo::to_json(t));
  CHECK(back.facts().p2p_net_chunk_bytes == 524288.0);
  CHECK(back.facts().nccl_buffsize_bytes == 8388608.0);
  CHECK_THAT(topo::describe(back), Catch::Contains("p2p net chunk 524288 bytes"));
  CHECK_THROWS_AS(topo::parse_setting("p2p_net_chunk_bytes=-1"), InvalidArgument);
  CHECK_THROWS_AS(topo::parse_setting("nccl_buffsize_bytes=1.5"), InvalidArgument);
  CHECK_THROWS_WITH(preset_with("aws-p5-2", {"p2p_net_chunk_bytes=100"}),
                    Catch::Contains("NCCL_P2P_NET_CHUNKSIZE") && Catch::Contains("100"));
}

// nccl-tests' sendrecv on 2 p5 nodes: ranks 7 -> 8 and 15 -> 0 cross the network. 256 MiB is
// 512 messages of 512 KiB (the run's chunk) or 256 of 1 MiB: the network send, the round's
// slowest, pays 2 x 256 completions of 1 us more with the smaller chunk, in both fidelities.
TEST_CASE("sendrecv over EFA: a network send pays its messages' completions") {
  const double bytes = 256.0 * 1024 * 1024;
  const auto time_us = [&](const std::vector<std::string>& settings, Fidelity f) {
    const topo::Topology t = preset_with("aws-p5-2", settings);
    const Tuner tuner(t, 16);
    return predict_p2p(tuner, sendrecv_pattern(16, bytes), f).time_us;
  };
  const std::vector<std::string> chunk_1m = {"p2p_net_chunk_bytes=1048576",
                                             "nccl_buffsize_bytes=8388608"};
  for (Fidelity f : {Fidelity::analytic, Fidelity::flow}) {
    CHECK(time_us(kRun, f) - time_us(chunk_1m, f) == Approx(2.0 * 256).epsilon(0.01));
  }
}
