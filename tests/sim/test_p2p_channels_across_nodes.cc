// NCCL's p2p channels of a communicator that spans nodes (sim/src/p2p_channels.h, their one owner):
// every peer gets the fewest channels any peer needs, so a network peer's 2 (1 at scale from NCCL
// 2.20.3) set the channels of a send between two GPUs of one node too, and those channels cap it.
#include <catch2/catch.hpp>
#include <vector>

#include "../../sim/src/model.h"
#include "../../sim/src/p2p_channels.h"
#include "twinccl/sim/p2p.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;

namespace {

sim::detail::TopologyView view(const char* preset, int nranks, int nccl_version = 0) {
  sim::detail::TopologyView v = sim::detail::view_of(topo::load_topology(preset), nranks);
  v.nccl_version = nccl_version;
  return v;
}

}  // namespace

TEST_CASE("p2p channels across nodes: the network peers' few, by NCCL version and scale",
          "[sim][p2p]") {
  // 2 x 8 H100, 8 x 400G: the graph's 8 channels doubled to 16 (connect.cc), a network peer's 2,
  // so every peer 2; a send starts on 1 (2 x 16 ranks > 16) and doubles once past a 128 KiB part.
  const sim::detail::NcclP2pPlan two = sim::detail::nccl_p2p_plan(view("h100-cluster-2", 16));
  CHECK(two.p2p_channels == 16);
  CHECK(two.per_peer == 2);
  CHECK(two.fewest == 1);
  CHECK(two.chunk_bytes == 131072);
  CHECK(sim::detail::nccl_p2p_send_channels(two, 64 * 1024) == 1);
  CHECK(sim::detail::nccl_p2p_send_channels(two, 64 << 20) == 2);
  // 8 nodes, 64 ranks: 2 x 64 > 4 x 16, so from 2.20.3 a network peer (and so every peer) gets 1;
  // 2 in 2.12 - 2.20.2, 1 before 2.12.
  CHECK(sim::detail::nccl_p2p_plan(view("h100-cluster-8", 64)).per_peer == 1);
  CHECK(sim::detail::nccl_p2p_plan(view("h100-cluster-8", 64, 21904)).per_peer == 2);
  CHECK(sim::detail::nccl_p2p_plan(view("h100-cluster-8", 64, 21104)).per_peer == 1);
  // OCI's A100 nodes: 2 x 100G a GPU under PCIe gen4 (24 GB/s): NCCL counts both NICs to reach
  // the GPU's link, so a network peer keeps 2 at 8 nodes where one NIC a GPU falls to 1.
  const sim::detail::TopologyView oci = view("oci-a100-8", 64);
  CHECK(oci.nics_per_gpu_by_bw == 2);
  CHECK(view("h100-cluster-8", 64).nics_per_gpu_by_bw == 1);
  CHECK(sim::detail::nccl_p2p_plan(oci).per_peer == 2);
  // One node keeps its own: 8 H100s' 24 channels -> 32 p2p, 32 a peer, 512 KiB chunks.
  const sim::detail::NcclP2pPlan node = sim::detail::nccl_p2p_plan(view("dgx-h100", 8));
  CHECK(node.p2p_channels == 32);
  CHECK(node.per_peer == 32);
  CHECK(node.chunk_bytes == 524288);
}

TEST_CASE("sendrecv across nodes: the sends inside a node run on the network peers' channels",
          "[sim][p2p]") {
  // nccl-tests' sendrecv (rank i -> i + 1): 7 of a node's 8 sends stay in the node. On 2 - 4 nodes
  // they run on 2 channels of 30 GB/s (H100's channel speed in one node), above the NIC's share,
  // which binds; on 8 nodes on 1, 30 GB/s, which binds (NVIDIA/nccl#1272's shape: 2.20's drop at
  // scale, none in 2.19).
  const double bytes = 512.0 * (1 << 20);
  const auto busbw = [&](const char* preset, int nranks, int version) {
    const topo::Topology topology = topo::load_topology(preset);
    const sim::Tuner tuner(topology, nranks, 0, /*software_latency*/ false, version);
    const double us =
        sim::predict_p2p(tuner, sim::sendrecv_pattern(nranks, bytes), sim::Fidelity::analytic)
            .time_us;
    return bytes / (us * 1e-6) / 1e9;
  };
  const double two_nodes = busbw("h100-cluster-2", 16, 0);
  const double eight_nodes = busbw("h100-cluster-8", 64, 0);
  CHECK(two_nodes > 45.0);
  CHECK(two_nodes < 50.0);
  CHECK(eight_nodes == Approx(30.0).epsilon(0.01));
  CHECK(busbw("h100-cluster-8", 64, 21904) == Approx(two_nodes).epsilon(0.01));
  // The flow prices the same sends alike.
  const topo::Topology eight = topo::load_topology("h100-cluster-8");
  const sim::Tuner tuner(eight, 64);
  const auto pattern = sim::sendrecv_pattern(64, bytes);
  CHECK(sim::predict_p2p(tuner, pattern, sim::Fidelity::flow).time_us ==
        Approx(sim::predict_p2p(tuner, pattern, sim::Fidelity::analytic).time_us).epsilon(0.02));
}
