// AWS's region tuner on p5 (sim/src/efa_region_tuner.cc, aws-ofi-nccl v1.21.1
// src/tuner/nccl_ofi_regions.cpp region_init_internal_p5_p5e): from 3 nodes of 8 GPUs the
// plugin, not NCCL's ranking, picks an all_reduce's algorithm and protocol. Checked on the held-out
// p5 rows (tests/fidelity/figures/aws-efa.csv, crazyguitar/aws-gpu-communication-benchmark@4fdb5a4;
// docs/fidelity.md "Issue 24, network window").
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

Prediction all_reduce(const topo::Topology& t, std::size_t bytes) {
  return predict(t, fidelity::all_reduce_request(bytes));
}

}  // namespace

// 4 x p5 (32 ranks): the plugin's tree/LL128 polygon ends at 36 MiB, its ring/LL128 one runs from
// there to ~1.35 GiB, ring/Simple beyond; NCCL's own ranking took NVLS-tree from 128 MiB (-14% to
// -20% on the measured 128 MiB - 1 GiB; ring/LL128 is within 6%).
TEST_CASE("EFA regions: p5 at 4 nodes runs the plugin's choice") {
  const topo::Topology p5 = topo::load_topology("aws-p5-4");
  const Prediction small = all_reduce(p5, 32u << 20);
  CHECK(small.algorithm == "tree");
  CHECK(small.protocol == Protocol::ll128);
  const Prediction mid = all_reduce(p5, 256u << 20);
  INFO(mid.algorithm << "/" << name(mid.protocol) << " " << mid.time_us << " us");
  CHECK(mid.algorithm == "ring");
  CHECK(mid.protocol == Protocol::ll128);
  CHECK(std::abs(mid.time_us / 1902.7 - 1.0) <= 0.10);  // 256 MiB, measured 1902.7 us
  const Prediction big = all_reduce(p5, std::size_t{2} << 30);
  CHECK(big.algorithm == "ring");
  CHECK(big.protocol == Protocol::simple);
}

// Two nodes go back to NCCL (nccl_ofi_regions.cpp:2011-2013), and p5's table is p5/p5e's alone:
// p5en (efa-v3) runs its own (efa_region_p5en.cc), which keeps ring/LL128 to 280 MiB on 4 nodes
// where p5's runs it to ~1.35 GiB: at 512 MiB p5en is ring/Simple, p5 ring/LL128.
TEST_CASE("EFA regions: 2 nodes keep NCCL's ranking, p5en its own table") {
  CHECK(all_reduce(topo::load_topology("aws-p5-2"), 256u << 20).algorithm == "nvls_tree");
  const Prediction p5en = all_reduce(topo::load_topology("aws-p5en-4"), 512u << 20);
  CHECK(p5en.algorithm == "ring");
  CHECK(p5en.protocol == Protocol::simple);
  CHECK(all_reduce(topo::load_topology("aws-p5-4"), 512u << 20).protocol == Protocol::ll128);
}

// compare_all (perf --compare) marks the plugin's pair as the choice and says who chose it, so the
// note under * does not credit NCCL's ranking with a choice NCCL did not make; 2 nodes: NCCL's.
TEST_CASE("EFA regions: compare_all names the region tuner as the chooser") {
  const Request r = fidelity::all_reduce_request(256u << 20);
  const auto chooser = [&](const char* preset) {
    for (const Prediction& p : compare_all(topo::load_topology(preset), r)) {
      if (p.tuner_choice)
        return p.algorithm + "/" + std::string(name(p.protocol)) + " by " + p.chosen_by;
    }
    return std::string("no choice");
  };
  CHECK(chooser("aws-p5-4") == "ring/LL128 by aws-ofi-nccl's region tuner");
  CHECK(chooser("aws-p5-2") == "nvls_tree/Simple by ");
}
