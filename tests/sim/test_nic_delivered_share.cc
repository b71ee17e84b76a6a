// A topology's nic_delivered_share (what `twinccl calibrate --scale-trend` writes): the share of
// the NICs' rate a call moves across nodes. It slows the NIC-bound call by 1 / share at analytic
// and flow fidelity alike (NCCL's algorithms through nccl_call_bus_gbps, the others, alltoall's
// direct and send/recv, through their network links), leaves one node and NCCL's choice as they
// were (NCCL ranks at the full rate), and the network class's share (TCPX 0.85) is its default.
#include <catch2/catch.hpp>
#include <string>

#include "support/edited_topology.h"
#include "twinccl/sim/p2p.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
Prediction all_reduce(const topo::Topology& t, int ranks, std::size_t bytes, const char* algo,
                      Fidelity fidelity = Fidelity::analytic) {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = bytes / 4;
  r.spec.nranks = ranks;
  r.algorithm = algo;
  r.fidelity = fidelity;
  return predict(t, r);
}
constexpr std::size_t kGiB = std::size_t{1} << 30;
}  // namespace

TEST_CASE("nic_delivered_share slows a NIC-bound call across nodes, at both fidelities") {
  const topo::Topology full = topo::load_topology("b200-cluster-4");
  const topo::Topology share = twinccl_test::with_settings(full, {"nic_delivered_share=0.8"});
  for (const char* algo : {"ring", "nvls_tree"}) {
    for (Fidelity f : {Fidelity::analytic, Fidelity::flow}) {
      INFO(algo << (f == Fidelity::flow ? " flow" : " analytic"));
      const double at_full = all_reduce(full, 32, 16 * kGiB, algo, f).time_us;
      const double at_share = all_reduce(share, 32, 16 * kGiB, algo, f).time_us;
      // 16 GiB: the latency and the pipeline's fill are under 1% of it.
      CHECK(at_share / at_full == Approx(1.0 / 0.8).epsilon(0.01));
      // The same rate at both fidelities.
      CHECK(
          at_share ==
          Approx(all_reduce(share, 32, 16 * kGiB, algo, Fidelity::analytic).time_us).epsilon(0.01));
    }
  }
  // One node: no NIC crossed, the same time.
  CHECK(all_reduce(share, 8, kGiB, "ring").time_us == all_reduce(full, 8, kGiB, "ring").time_us);
  // NCCL's own choice ranks at the full rate: the same algorithm and protocol.
  const Prediction chosen_full = all_reduce(full, 32, 64 << 20, "");
  const Prediction chosen_share = all_reduce(share, 32, 64 << 20, "");
  CHECK(chosen_share.algorithm == chosen_full.algorithm);
  CHECK(chosen_share.protocol == chosen_full.protocol);
}

TEST_CASE("nic_delivered_share: absent is the network class's, TCPX's 0.85") {
  const topo::Topology tcpx = topo::load_topology("gcp-a3high-2");
  const topo::Topology set_085 = twinccl_test::with_settings(tcpx, {"nic_delivered_share=0.85"});
  const topo::Topology set_1 = twinccl_test::with_settings(tcpx, {"nic_delivered_share=1"});
  const double absent = all_reduce(tcpx, 16, kGiB, "ring").time_us;
  CHECK(all_reduce(set_085, 16, kGiB, "ring").time_us == Approx(absent).epsilon(1e-12));
  CHECK(all_reduce(set_1, 16, kGiB, "ring").time_us < 0.9 * absent);
}

TEST_CASE("nic_delivered_share: alltoall (direct) and send/recv across nodes move the share too") {
  // 2 nodes of 8, 1 GiB a rank: the NICs bound both (send/recv: the ring's two node crossings).
  const topo::Topology full = topo::load_topology("b200-cluster-2");
  const topo::Topology share = twinccl_test::with_settings(full, {"nic_delivered_share=0.8"});
  for (Fidelity f : {Fidelity::analytic, Fidelity::flow}) {
    INFO((f == Fidelity::flow ? "flow" : "analytic"));
    Request r;
    r.spec.kind = OpKind::all_to_all;
    r.spec.count = kGiB / 4;
    r.spec.nranks = 16;
    r.fidelity = f;
    const double a2a_full = predict(full, r).time_us, a2a_share = predict(share, r).time_us;
    CHECK(a2a_share / a2a_full > 1.15);
    CHECK(a2a_share / a2a_full < 1.0 / 0.8 + 1e-9);
    const double p2p_full = predict_p2p(Tuner(full, 16), sendrecv_pattern(16, kGiB), f).time_us;
    const double p2p_share = predict_p2p(Tuner(share, 16), sendrecv_pattern(16, kGiB), f).time_us;
    CHECK(p2p_share / p2p_full > 1.15);
    CHECK(p2p_share / p2p_full < 1.0 / 0.8 + 1e-9);
  }
}

TEST_CASE("a share trend (calibrate --scale-trend) moves the share with the topology's nodes") {
  // 0.8 at 4 nodes, -10% a doubling: 0.72 at 8, 0.648 at 16; at 2 nodes 0.8 / 0.9 = 0.889; the
  // trend starts from the topology as given when its node count is not said. Each is priced as the
  // preset of that size with the share set outright (a NIC-bound 16 GiB ring).
  const topo::Topology trend =
      twinccl_test::with_settings(topo::load_topology("b200-cluster-4"),
                                  {"nic_delivered_share=0.8", "nic_share_per_doubling=-0.1"});
  CHECK(trend.facts().nic_share_nodes == 4);
  CHECK(trend.name() ==
        "b200-cluster-4+nic_delivered_share=0.8,nic_share_per_doubling=-0.1,"
        "nic_share_nodes=4");
  const auto ring_us = [](const topo::Topology& t) {
    return all_reduce(t, t.gpu_count(), 16 * kGiB, "ring").time_us;
  };
  const auto preset_at = [](int nodes, double share) {
    return twinccl_test::with_settings(topo::load_topology("b200-cluster-" + std::to_string(nodes)),
                                       {"nic_delivered_share=" + std::to_string(share)});
  };
  CHECK(ring_us(trend) == Approx(ring_us(preset_at(4, 0.8))).epsilon(1e-6));
  for (const auto& [nodes, share] : {std::pair{8, 0.72}, {16, 0.648}, {2, 0.8 / 0.9}}) {
    INFO(nodes << " nodes");
    const topo::Topology t = twinccl_test::with_settings(trend, {"nodes=" + std::to_string(nodes)});
    CHECK(ring_us(t) == Approx(ring_us(preset_at(nodes, share))).epsilon(1e-5));
  }
  // Up the trend, never above the NICs' line rate.
  const topo::Topology rising = twinccl_test::with_settings(
      topo::load_topology("b200-cluster-4"),
      {"nic_delivered_share=0.9", "nic_share_per_doubling=0.5", "nodes=16"});
  CHECK(ring_us(rising) == Approx(ring_us(topo::load_topology("b200-cluster-16"))).epsilon(1e-6));
}
