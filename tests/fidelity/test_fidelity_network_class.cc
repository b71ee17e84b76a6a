// What a network class changes, from the vendors' code (sim/src/network_class.h), checked on
// held-out rows (tests/fidelity/figures/aws-efa.csv, gcp-tcpxo.csv; docs/fidelity.md "Issue 24,
// third round"): aws-ofi-nccl's three EFA platforms (the latency it reports to NCCL, which NCCL
// ranks with, and the hop its tuner measured, which the call takes) and GCP's NCCL profile
// (NCCL_PROTO=Simple, NVLS off) on the TCP-based GPU NICs.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

Prediction all_reduce(const topo::Topology& t, std::size_t bytes,
                      std::optional<Protocol> protocol = std::nullopt) {
  return predict(t, fidelity::all_reduce_request(bytes, protocol));
}

// The same graph with another network class (a topology file's "network" key).
topo::Topology with_network(const topo::Topology& t, const std::string& from,
                            const std::string& to) {
  std::string json = topo::to_json(t);
  const std::string key = "\"network\": \"" + from + "\"";
  const std::size_t at = json.find(key);
  REQUIRE(at != std::string::npos);
  json.replace(at, key.size(), "\"network\": \"" + to + "\"");
  return topo::topology_from_json(json);
}

}  // namespace

// awsome-distributed-training@88c2e71b, 2 x p4de, 16 B: 161.4 us. aws-ofi-nccl runs its SENDRECV
// protocol on p4d/p4de and reports 75 us to NCCL (platform-aws.cpp:101), which NCCL's model adds
// to each network hop; with AWS's tuner's p5 hop (20 us) the row was 2.7x too fast.
TEST_CASE("EFA on p4de: the plugin's 75 us is what the 2-node small rows need") {
  const topo::Topology p4de = topo::load_topology("aws-p4de-2");
  const Prediction p = all_reduce(p4de, 16);
  INFO(p.algorithm << "/" << name(p.protocol) << " " << p.time_us << " us");
  CHECK(std::abs(p.time_us / 161.4 - 1.0) <= 0.25);
  const double as_p5 = all_reduce(with_network(p4de, "efa-sendrecv", "efa"), 16).time_us;
  CHECK(as_p5 / 161.4 - 1.0 < -0.5);
}

// On p5 NCCL ranks at 2 nodes (AWS's region tuner hands 2 nodes back, nccl_ofi_regions.cpp:2013)
// with the plugin's 75 us per hop, so tree/LL128 keeps 1 MiB from NVLS-tree (whose Simple hops
// NCCL charges the plugin's latency twice); the call takes the tuner's 20 us hops.
TEST_CASE("EFA on p5: NCCL ranks with the plugin's latency, the call takes the tuner's hop") {
  const topo::Topology p5 = topo::load_topology("aws-p5-2");
  CHECK(all_reduce(p5, 1 << 20).algorithm == "tree");
  // tree/LL at 16 B: 6.8 + 2 (7 x 0.6 + 20) us of NCCL's model, + 5 us launch.
  const Prediction small = all_reduce(p5, 16);
  CHECK(small.algorithm == "tree");
  CHECK(small.time_us == Approx(6.8 + 2.0 * (7 * 0.6 + 20.0) + 5.0).epsilon(0.01));
  // p6-b200 is the plugin's "p5en/p6-b200" platform: the tuner's P5en hop, 18 us.
  const Prediction p6 = all_reduce(topo::load_topology("aws-p6-b200-2"), 8);
  CHECK(p6.time_us == Approx(6.8 + 2.0 * (7 * 0.6 + 18.0) + 5.0).epsilon(0.01));
}

// GCP's nccl-env-profile.sh sets NCCL_PROTO=Simple and NCCL_NVLS_ENABLE=0 on A3 Mega: the 32 KiB
// row of gcp-a3mega-h100-2node-all_reduce.log (155.2 us) was -79% as tree/LL.
TEST_CASE("GCP TCPXO: Simple alone and no NVLS, as GCP's NCCL profile runs it") {
  const topo::Topology a3mega = topo::load_topology("gcp-a3mega-2");
  for (std::size_t bytes : {std::size_t{32768}, std::size_t{1} << 20, std::size_t{1} << 30}) {
    const Prediction p = all_reduce(a3mega, bytes);
    INFO(bytes << " B: " << p.algorithm << "/" << name(p.protocol));
    CHECK(p.protocol == Protocol::simple);
    CHECK(p.algorithm.rfind("nvls", 0) == std::string::npos);
  }
  CHECK(std::abs(all_reduce(a3mega, 32768).time_us / 155.2 - 1.0) <= 0.30);
  // The ll128 profile (NCCL_PROTO=Simple,LL128) is a forced protocol: it still runs.
  CHECK(all_reduce(a3mega, 32768, Protocol::ll128).protocol == Protocol::ll128);
}
