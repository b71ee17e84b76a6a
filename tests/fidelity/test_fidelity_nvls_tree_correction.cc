// NCCL's correction of NVLS-tree all_reduce on Blackwell GPUs with x86 hosts
// (sim/src/nvls_tree_correction.cc): from v2.29.2-1 NCCL multiplies the NVLS-tree bandwidth of its
// tuning model by the tree's Simple correction factor by size (src/graph/tuning.cc:595,
// ncclTopoGetAlgoTime: minCompCap >= 100 and cpuArch x86), not on Grace (GB200/GB300) and not on
// Hopper. Held-out check: the 2 x 8 B200 Lambda log (tests/fidelity/logs/lambda-b200-2node-all_
// reduce-8B-2G.log, dstack@d2fdd17 lambda.md), whose 16 / 32 MiB rows the old model put 15% fast
// (docs/fidelity.md, "NVLS-tree on Blackwell x86").
#include <catch2/catch.hpp>
#include <string>

#include "all_reduce_request.h"
#include "support/edited_topology.h"
#include "twinccl/errors.h"
#include "twinccl/sim/timing.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

using twinccl_test::with_host_cpu;

constexpr std::size_t kMiB = std::size_t{1} << 20;

// The bandwidth term alone (no latency, no fills, no host launch) of a forced NVLS-tree
// all_reduce.
double bare_us(const topo::Topology& t, std::size_t bytes) {
  Request r = fidelity::all_reduce_request(bytes, Protocol::simple, "nvls_tree");
  r.software_latency = false;
  r.gpus_per_thread = 0;
  return predict(t, r).time_us;
}

}  // namespace

TEST_CASE("NVLS-tree on Blackwell x86: NCCL's tree correction by size") {
  const topo::Topology x86 = topo::load_topology("b200-cluster-2");
  REQUIRE(x86.facts().host_cpu == topo::HostCpu::x86);
  const topo::Topology grace = with_host_cpu(x86, "arm");
  REQUIRE(grace.facts().host_cpu == topo::HostCpu::arm);
  // The Simple row at log2(bytes / 64): 1 MiB .5, 2 MiB .6, 8 MiB .8, 16 / 32 MiB .7, 64 MiB .8,
  // 512 MiB .9 (the entry 2.29.2 added), 1 GiB none.
  const std::pair<std::size_t, double> factors[] = {{1, 0.5},  {2, 0.6},  {8, 0.8},   {16, 0.7},
                                                    {32, 0.7}, {64, 0.8}, {512, 0.9}, {1024, 1.0}};
  for (const auto& [mib, factor] : factors) {
    INFO(mib << " MiB");
    CHECK(bare_us(x86, mib * kMiB) == Approx(bare_us(grace, mib * kMiB) / factor).epsilon(1e-9));
  }
  // Flow times the same correction (every NVLS-tree flow slowed alike): flow = analytic.
  Request r = fidelity::all_reduce_request(32 * kMiB, Protocol::simple, "nvls_tree");
  const double analytic_us = predict(x86, r).time_us;
  r.fidelity = Fidelity::flow;
  CHECK(predict(x86, r).time_us == Approx(analytic_us).epsilon(1e-6));
}

TEST_CASE("NVLS-tree correction: not on Grace racks, not on Hopper") {
  // GB200 / GB300 NVL72 racks have Grace hosts (arm), kept through the topology file.
  const topo::Topology rack = topo::load_topology("gb200-nvl72-cluster-2x64");
  CHECK(rack.facts().host_cpu == topo::HostCpu::arm);
  CHECK(topo::topology_from_json(topo::to_json(rack)).facts().host_cpu == topo::HostCpu::arm);
  CHECK(bare_us(with_host_cpu(rack, "x86"), 32 * kMiB) ==
        Approx(bare_us(rack, 32 * kMiB) / 0.7).epsilon(1e-9));
  // Hopper: NCCL leaves its NVLS-tree alone (minCompCap >= 100).
  const topo::Topology h100 = topo::load_topology("h100-cluster-2");
  CHECK(bare_us(h100, 32 * kMiB) == Approx(bare_us(with_host_cpu(h100, "arm"), 32 * kMiB)));
  // NCCL's XML names the host's architecture on <cpu arch>: arm64 is Grace.
  const std::string xml =
      R"(<system version="1"><cpu numaid="0" arch="arm64" vendor="ARM"><pci busid="0000:01:00.0")"
      R"( class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="100")"
      R"( rank="0" gdr="1"/></pci></cpu></system>)";
  CHECK(topo::topology_from_nccl_xml(xml).facts().host_cpu == topo::HostCpu::arm);
}

TEST_CASE("a topology file's host_cpu: x86, x86-amd or arm, anything else refused by name") {
  const topo::Topology t = topo::load_topology("b200-cluster-2");
  CHECK_THROWS_WITH(with_host_cpu(t, "ppc64"), Catch::Contains("host_cpu") &&
                                                   Catch::Contains("ppc64") &&
                                                   Catch::Contains("x86, x86-amd, arm"));
  CHECK_THROWS_AS(with_host_cpu(t, "ppc64"), ConfigError);
  CHECK(with_host_cpu(t, "x86").facts().host_cpu == topo::HostCpu::x86);
  const topo::Topology amd = with_host_cpu(t, "x86-amd");
  CHECK(amd.facts().host_cpu == topo::HostCpu::x86_amd);
  CHECK(topo::topology_from_json(topo::to_json(amd)).facts().host_cpu == topo::HostCpu::x86_amd);
  // An AMD x86 host is x86 to NCCL's NVLS-tree correction too.
  CHECK(bare_us(amd, 32 * kMiB) == Approx(bare_us(t, 32 * kMiB)).epsilon(1e-12));
}

TEST_CASE("NVLS-tree correction: in NCCL's ranking from 2.29.2 only, in the call's time always") {
  const topo::Topology t = topo::load_topology("b200-cluster-2");
  const Tuner newest(t, 0);
  const Tuner v2289(t, 0, 0, true, 22809);  // NCCL 2.28.9: no NVLS-tree correction yet
  const std::size_t count = 32 * kMiB / 4;  // 32 MiB of float: factor 0.7
  const Choice now = newest.choose(OpKind::all_reduce, count, DataType::float32, "nvls_tree");
  const Choice then = v2289.choose(OpKind::all_reduce, count, DataType::float32, "nvls_tree");
  const double latency_us = 25.0 + 2.0 * 20.9;  // NCCL's NVLS hop and 2 NVLS-tree network hops
  CHECK((now.rank_us - latency_us) * 0.7 == Approx(then.rank_us - latency_us).epsilon(1e-9));
  CHECK(now.time_us == Approx(then.time_us).epsilon(1e-12));
}

// Held out: the Lambda B200 log's 16 and 32 MiB rows (out of place), NCCL 2.26.2's choice
// (NVLS-tree). The old model: 159.2 / 217.4 us (-14.8 / -15.0%).
TEST_CASE("NVLS-tree on 2 x 8 B200 (Lambda, IB): 16 and 32 MiB within 10%") {
  const topo::Topology t = topo::load_topology("b200-cluster-2");
  const std::pair<std::size_t, double> rows[] = {{16, 186.86}, {32, 255.79}};
  for (const auto& [mib, measured_us] : rows) {
    INFO(mib << " MiB");
    Request r = fidelity::all_reduce_request(mib * kMiB);
    r.nccl_version = 22602;
    const Prediction p = predict(t, r);
    CHECK(p.algorithm == "nvls_tree");
    CHECK(p.time_us == Approx(measured_us).epsilon(0.10));
  }
}
