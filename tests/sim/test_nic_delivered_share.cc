// A topology's nic_delivered_share (what `twinccl calibrate --scale-trend` writes): the share of
// the NICs' rate a collective of NCCL's algorithms moves across nodes. It slows the NIC-bound call
// by 1 / share at analytic and flow fidelity alike (one owner: nccl_call_bus_gbps), leaves one node
// and NCCL's choice as they were (NCCL ranks at the full rate), and the network class's share
// (TCPX 0.85) is its default.
#include <catch2/catch.hpp>
#include <string>

#include "support/edited_topology.h"
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
