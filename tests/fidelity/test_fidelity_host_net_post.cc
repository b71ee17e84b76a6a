// Two terms of NCCL's tuning model that depend on the host's CPU vendor, not the GPU
// (NVIDIA/nccl v2.27.7-1 src/graph/tuning.cc; RCCL's the same): a network post's price
// (getNetOverhead :204-209, 1 us on Intel x86 and every other host, 2 us on AMD x86), which every
// multi-node ring step's intra-node hop costs at least (x3 for Simple, :340-347), and LL's
// bandwidth cap across nodes (llMaxBws by the host's row, :233-237). The model took 1 us and the
// GPU's LL row on every host; the topology now says which hosts are AMD EPYC (`host_cpu:
// x86-amd`: AWS p5/p5e, AMD's own MI300X / MI325X / MI355X systems, DGX A100), so NCCL's ranking
// and the call's time see it. Held-out effect: docs/fidelity.md, "The host's network post".
#include <catch2/catch.hpp>
#include <string>

#include "../../sim/src/model.h"
#include "all_reduce_request.h"
#include "support/edited_topology.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

using twinccl_test::with_host_cpu;

// The software latency of a forced ring all_gather of `bytes` (nccl-tests' size column).
double ring_all_gather_latency_us(const topo::Topology& t, std::size_t bytes, Protocol protocol) {
  return fidelity::fixed_latency_us(
      t, fidelity::all_gather_request(bytes, t.gpu_count(), protocol, "ring"));
}

}  // namespace

TEST_CASE("host network post: the presets say which hosts are AMD EPYC") {
  for (const char* name : {"aws-p5-2", "aws-p5e-2", "mi300x-roce-2", "mi325x-roce-2",
                           "mi355x-roce-2", "mi300x-8", "dgx-a100", "oci-a100-2"}) {
    INFO(name);
    CHECK(topo::load_topology(name).facts().host_cpu == topo::HostCpu::x86_amd);
  }
  // Intel hosts, and a cloud node built from an AMD one keeps only what its own preset says
  // (oci-a100-2 says AMD EPYC: OCI's shapes page, cloud_clusters.cc).
  for (const char* name : {"aws-p5en-2", "aws-p4de-2", "aws-p6-b200-2", "dgx-h100",
                           "h100-cluster-2", "gcp-a3mega-2"}) {
    INFO(name);
    CHECK(topo::load_topology(name).facts().host_cpu == topo::HostCpu::x86);
  }
}

// 4 p5 nodes, all_gather ring/Simple: 31 steps, 3 of them across nodes. The 28 intra-node steps
// cost max(NCCL's NVLink hop, 3 x the post): 3 x 2 = 6 us on p5's EPYC hosts, 3 x 1 = 3 us on an
// Intel host, where the NVLink hop (Simple, ring: 3.4 us) binds instead. LL128: max(1.9, 2) = 2 us
// against 1.9.
TEST_CASE("host network post: AMD x86 hosts pay NCCL's 2 us a ring step across nodes") {
  const topo::Topology amd = topo::load_topology("aws-p5-4");
  const topo::Topology intel = with_host_cpu(amd, "x86");
  const std::size_t bytes = std::size_t{1} << 30;
  CHECK(ring_all_gather_latency_us(amd, bytes, Protocol::simple) -
            ring_all_gather_latency_us(intel, bytes, Protocol::simple) ==
        Approx(28.0 * (6.0 - 3.4)).epsilon(1e-6));
  CHECK(ring_all_gather_latency_us(amd, bytes, Protocol::ll128) -
            ring_all_gather_latency_us(intel, bytes, Protocol::ll128) ==
        Approx(28.0 * (2.0 - 1.9)).epsilon(1e-6));
  // One node posts nothing to the network: the host's vendor changes nothing there.
  const topo::Topology one = topo::load_topology("aws-p5-1");
  CHECK(ring_all_gather_latency_us(one, bytes, Protocol::simple) ==
        Approx(ring_all_gather_latency_us(with_host_cpu(one, "x86"), bytes, Protocol::simple)));
}

// NCCL's choice moves with it: on 2 AMD MI300X RoCE nodes (hisohara/ai-scripts AAC10,
// amd-multinode.csv:21, held out) all_reduce 64 MiB ranks tree/Simple first where the 1 us post
// ranked ring/Simple; measured 821.9 us, tree -1.9%, ring -37.1%.
TEST_CASE("host network post: NCCL's ranking sees it") {
  const topo::Topology amd = topo::load_topology("mi300x-roce-2");
  const Request r = fidelity::all_reduce_request(std::size_t{64} << 20, Protocol::simple, "");
  CHECK(predict(amd, r).algorithm == "tree");
  CHECK(predict(with_host_cpu(amd, "x86"), r).algorithm == "ring");
}

// A what-if on the command line sets the same fact as the topology file: `--set host_cpu=x86` on
// the AMD preset predicts what its file with "host_cpu": "x86" does (511.9 us ring/Simple at 64
// MiB, 801.6 tree/Simple on the EPYC hosts).
TEST_CASE("host CPU: --set host_cpu predicts as the topology file's host_cpu") {
  const topo::Topology amd = topo::load_topology("mi300x-roce-2");
  const Request r = fidelity::all_reduce_request(std::size_t{64} << 20, Protocol::simple, "");
  const Prediction set = predict(twinccl_test::with_settings(amd, {"host_cpu=x86"}), r);
  const Prediction file = predict(with_host_cpu(amd, "x86"), r);
  CHECK(set.algorithm == file.algorithm);
  CHECK(set.time_us == Approx(file.time_us).epsilon(1e-12));
  CHECK(predict(twinccl_test::with_settings(amd, {"host_cpu=x86-amd"}), r).time_us ==
        Approx(predict(amd, r).time_us).epsilon(1e-12));
}

// So does the network's class: `--set network=efa` on an InfiniBand cluster predicts what its file
// with "network": "efa" does, and a small all_reduce pays EFA's hop (23 us Simple, 14 on IB).
TEST_CASE("network class: --set network predicts as the topology file's network") {
  const topo::Topology ib = topo::load_topology("h100-cluster-2");
  for (const std::size_t bytes : {std::size_t{4096}, std::size_t{64} << 20}) {
    const Request r = fidelity::all_reduce_request(bytes, Protocol::simple, "");
    const Prediction set = predict(twinccl_test::with_settings(ib, {"network=efa"}), r);
    const Prediction file = predict(twinccl_test::with_file_fact(ib, "network", "efa"), r);
    INFO(bytes << " B: --set " << set.time_us << " us, file " << file.time_us);
    CHECK(set.algorithm == file.algorithm);
    CHECK(set.time_us == Approx(file.time_us).epsilon(1e-12));
  }
  const Request small = fidelity::all_reduce_request(4096, Protocol::simple, "ring");
  CHECK(predict(twinccl_test::with_settings(ib, {"network=efa"}), small).time_us >
        predict(ib, small).time_us);
}

// LL's bandwidth cap across nodes is the host's row of llMaxBws, not the GPU's (tuning.cc index1,
// "for multi-node, we look at CPU type"): Intel and other hosts 39.0 / 20.4 GB/s on 2 / more
// nodes, AMD x86 hosts 22.5 / 19.0; one node keeps the GPU's row (Hopper 141). The model took
// Hopper's 45 / 35 across nodes. Ring/LL's bus bandwidth is min(cap, busBw / 2), far above the cap
// here.
TEST_CASE("host CPU: LL's multi-node bandwidth cap is the host's, not the GPU's") {
  const auto ring_ll_gbps = [](const topo::Topology& t) {
    const detail::TopologyView v = detail::view_of(t, t.gpu_count());
    return detail::nccl_bus_bandwidth(v, detail::nccl_channels(v, 0), detail::NcclAlgo::ring,
                                      Protocol::ll, OpKind::all_reduce);
  };
  CHECK(ring_ll_gbps(topo::load_topology("h100-cluster-2")) == Approx(39.0));
  CHECK(ring_ll_gbps(topo::load_topology("h100-cluster-4")) == Approx(20.4));
  CHECK(ring_ll_gbps(topo::load_topology("aws-p5-2")) == Approx(22.5));
  CHECK(ring_ll_gbps(topo::load_topology("aws-p5-4")) == Approx(19.0));
  CHECK(ring_ll_gbps(with_host_cpu(topo::load_topology("aws-p5-2"), "x86")) == Approx(39.0));
  CHECK(ring_ll_gbps(topo::load_topology("h100-cluster-1")) == Approx(141.0));
}

// NCCL's topology XML names the vendor on <cpu vendor>: AuthenticAMD on x86_64 is an AMD host.
TEST_CASE("host network post: NCCL's XML vendor reads as the host's CPUs") {
  const auto xml = [](const char* arch, const char* vendor) {
    return std::string(R"(<system version="1"><cpu numaid="0" arch=")") + arch + R"(" vendor=")" +
           vendor +
           R"("><pci busid="0000:01:00.0" class="0x030200" link_speed="32.0 GT/s PCIe")"
           R"( link_width="16"><gpu dev="0" sm="90" rank="0" gdr="1"/></pci></cpu></system>)";
  };
  CHECK(topo::topology_from_nccl_xml(xml("x86_64", "AuthenticAMD")).facts().host_cpu ==
        topo::HostCpu::x86_amd);
  CHECK(topo::topology_from_nccl_xml(xml("x86_64", "GenuineIntel")).facts().host_cpu ==
        topo::HostCpu::x86);
  CHECK(topo::topology_from_nccl_xml(xml("arm64", "ARM")).facts().host_cpu == topo::HostCpu::arm);
}
