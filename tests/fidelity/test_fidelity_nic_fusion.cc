// A node with more NICs than GPUs and NIC cards of several ports (OCI's A100 shapes: 16 x 100G
// devices on 8 x 200G cards): NCCL's search puts a channel on every device with the channel's
// speed left, and fuses a card's ports into one device (NCCL's IB / RoCE transport from 2.20.3,
// NCCL_IB_MERGE_NICS; other networks from 2.24) (sim/src/topology_view.cc
// nccl_nets; docs/fidelity.md, "OCI A100 held out"). Judged on Oracle's published 2-node runs
// (tests/fidelity/figures/roce-nvidia.csv): before, the model gave such a node 8 channels of 12
// GB/s (one a GPU), half its NICs, and its ring all_reduce took twice the measured time.
#include <catch2/catch.hpp>

#include "../../sim/src/model.h"
#include "../../sim/src/network_class.h"
#include "../support/edited_topology.h"
#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;

namespace {

sim::Request at_version(std::size_t bytes, int nccl_version, std::string algorithm = {}) {
  sim::Request r = fidelity::all_reduce_request(bytes, std::nullopt, std::move(algorithm));
  r.nccl_version = nccl_version;
  return r;
}

double error_of(double predicted, double measured) { return predicted / measured - 1.0; }

}  // namespace

TEST_CASE(
    "NCCL's channels on 16 x 100G RoCE devices: 16 before 2.20.3, 8 fused cards of 200G from it") {
  const topo::Topology t = topo::load_topology("oci-a100-2");
  sim::detail::TopologyView v = sim::detail::view_of(t, t.gpu_count());
  v.nccl_version = 21904;  // 2.19.4: no merge
  sim::detail::NcclNets nets = sim::detail::nccl_nets(v);
  CHECK(nets.count == 16);
  CHECK(nets.gbps == Approx(12.5));
  sim::detail::ChannelPlan plan = sim::detail::nccl_channels(v, 0);
  CHECK(plan.channels == 16);  // the old code: 8, one a GPU
  CHECK(plan.per_channel_gbps == Approx(12.0));
  v.nccl_version = 22003;  // 2.20.3: the IB transport merges a card's ports, capped by its PCIe
  nets = sim::detail::nccl_nets(v);
  CHECK(nets.count == 8);
  CHECK(nets.gbps == Approx(24.0));
  plan = sim::detail::nccl_channels(v, 0);
  CHECK(plan.channels == 8);
  CHECK(plan.per_channel_gbps == Approx(24.0));
  // Either way the node's NICs carry 192 GB/s, not the 96 the old code gave it.
  CHECK(plan.bus_gbps == Approx(192.0));

  // NCCL's IB / RoCE transport merges from 2.20.3; a net plugin's network from 2.24 (vNICs).
  CHECK(sim::detail::network_terms(topo::NetworkClass::roce).nccl_ib_transport);
  CHECK(sim::detail::network_terms(topo::NetworkClass::infiniband).nccl_ib_transport);
  CHECK_FALSE(sim::detail::network_terms(topo::NetworkClass::efa).nccl_ib_transport);
  CHECK_FALSE(sim::detail::network_terms(topo::NetworkClass::roce_gib).nccl_ib_transport);
  v.nccl_version = 22304;
  v.network = topo::NetworkClass::roce_gib;  // a plugin's network: not merged before 2.24
  CHECK(sim::detail::nccl_nets(v).count == 16);
  v.nccl_version = 22403;
  CHECK(sim::detail::nccl_nets(v).count == 8);

  // One port a card (the preset edited): no fusion whatever the version.
  const topo::Topology single = twinccl_test::preset_with("oci-a100-2", {"nic_ports=1"});
  sim::detail::TopologyView s = sim::detail::view_of(single, single.gpu_count());
  CHECK(sim::detail::nccl_nets(s).count == 16);
  CHECK(sim::detail::nccl_channels(s, 0).channels == 16);
}

TEST_CASE("OCI A100 2 nodes: the ring at its NICs' rate, and the version that fused the cards") {
  const topo::Topology t = topo::load_topology("oci-a100-2");
  // oracle-quickstart/oci-hpc-oke@61d210a, 2 x BM.GPU.B4.8, NCCL 2.29.3, NCCL_ALGO=Ring: 1 GiB
  // 10887.4 us, 8 GiB 84948.7 us (the old model: +94% / +98%).
  const sim::Prediction ring = sim::predict(t, at_version(std::size_t(1) << 30, 22903, "ring"));
  CHECK(std::abs(error_of(ring.time_us, 10887.4)) < 0.10);
  const sim::Prediction ring8 = sim::predict(t, at_version(std::size_t(8) << 30, 22903, "ring"));
  CHECK(std::abs(error_of(ring8.time_us, 84948.7)) < 0.10);

  // NCCL's choice at 1 GiB: ring from 2.20.3 (8 fused devices: tree capped at 8 x 23.6 = 188.8
  // GB/s, under the ring's 192), tree before it (16 channels: 220.8). The runs agree: 2.29.3
  // moves 184.6 GB/s busbw (oci-hpc-oke@bab177d, a ring's rate), 2.19.3 219.1 (@1402938).
  const sim::Prediction newer = sim::predict(t, at_version(std::size_t(1) << 30, 22903));
  CHECK(newer.algorithm == "ring");
  CHECK(std::abs(error_of(newer.time_us, 10908.0)) < 0.10);
  const sim::Prediction older = sim::predict(t, at_version(std::size_t(1) << 30, 21903));
  CHECK(older.algorithm == "tree");
  CHECK(older.time_us < newer.time_us);
}

TEST_CASE("OCI H100 2 nodes, NCCL 2.23.4: 16 x 200G merged into 8 x 400G, NVLS-tree at its rate") {
  // oracle-quickstart/oci-hpc@b5285a6 documentation/Troubleshooting.md:143-181: 1 GiB 4478.8 us,
  // 16 GiB 68359 us (449.5 / 471.2 GB/s busbw: above any ring's 16 x 25 GB/s). With the card's
  // ports apart (NCCL 2.24's vNICs read as the first merge) the model ranked the ring: +21 / +23%.
  const topo::Topology t = topo::load_topology("oci-h100-2");
  const sim::Prediction p1 = sim::predict(t, at_version(std::size_t(1) << 30, 22304));
  CHECK(p1.algorithm == "nvls_tree");
  CHECK(std::abs(error_of(p1.time_us, 4478.8)) < 0.10);
  const sim::Prediction p16 = sim::predict(t, at_version(std::size_t(16) << 30, 22304));
  CHECK(std::abs(error_of(p16.time_us, 68359.0)) < 0.10);
}
