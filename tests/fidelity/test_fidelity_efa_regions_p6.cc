// AWS's region tuner on p6-b200, p6-b300 and p5en (sim/src/efa_region_p6.cc, efa_region_p6_b300.cc,
// efa_region_p5en.cc; aws-ofi-nccl v1.21.1 src/tuner/nccl_ofi_regions.cpp region_init_internal_p6
// / _p6_b300 / _p5en): from 3
// nodes of 8 GPUs the plugin
// picks all_reduce's, all_gather's and reduce_scatter's algorithm and protocol from its own
// polygons, not p5's and not NCCL's ranking. Judged on the held-out 4-node p6-b200 rows
// (tests/fidelity/figures/aws-efa.csv, awslabs/awsome-distributed-ai@25305f5; docs/fidelity.md
// "AWS's p6 region tuner").
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

std::string choice(const Prediction& p) {
  return p.algorithm + "/" + std::string(name(p.protocol));
}

}  // namespace

// 4 x p6-b200 (32 ranks): tree/LL to 384 KiB, tree/LL128 to 17.5 MiB, ring/LL128 to 127.5 MiB,
// NVLS-tree/Simple to 415 MiB, ring/Simple beyond. NCCL's own ranking, which the model used before,
// took tree/LL128 at 128 - 256 MiB and ring/LL128 at 1 GiB (+76 / +87 / +19% on the measured rows).
TEST_CASE("EFA regions: p6-b200 at 4 nodes runs its own table's all_reduce choice") {
  const topo::Topology p6 = topo::load_topology("aws-p6-b200-4");
  const auto at = [&](std::size_t bytes) {
    return predict(p6, fidelity::all_reduce_request(bytes));
  };
  CHECK(choice(at(256u << 10)) == "tree/LL");
  CHECK(choice(at(16u << 20)) == "tree/LL128");
  CHECK(choice(at(64u << 20)) == "ring/LL128");
  CHECK(choice(at(256u << 20)) == "nvls_tree/Simple");
  const Prediction gib = at(std::size_t{1} << 30);
  INFO(choice(gib) << " " << gib.time_us << " us");
  CHECK(choice(gib) == "ring/Simple");
  CHECK(std::abs(gib.time_us / 5668.6 - 1.0) <= 0.10);  // measured: 367 GB/s busbw at 1 GiB
}

// all_gather's point is NCCL's nBytes, the whole gathered buffer (ncclFuncMaxSendRecvCount): 448
// MiB of 32 ranks' 14 MiB lies past the ring/LL128 staircase's 435 MiB at 32 ranks (ring/Simple);
// read as one rank's 14 MiB it would be ring/LL128.
TEST_CASE("EFA regions: p6-b200 all_gather and reduce_scatter place the whole buffer") {
  const topo::Topology p6 = topo::load_topology("aws-p6-b200-4");
  const int ranks = p6.gpu_count();
  CHECK(choice(predict(p6, fidelity::all_gather_request(std::size_t{448} << 20, ranks))) ==
        "ring/Simple");
  CHECK(choice(predict(p6, fidelity::all_gather_request(std::size_t{256} << 20, ranks))) ==
        "ring/LL128");
  CHECK(choice(predict(p6, fidelity::all_gather_request(std::size_t{1} << 20, ranks))) ==
        "ring/LL");
  Request rs = fidelity::all_gather_request(std::size_t{512} << 20, ranks);
  rs.spec.kind = OpKind::reduce_scatter;  // 512 MiB: past reduce_scatter's 485 MiB at 32 ranks
  CHECK(choice(predict(p6, rs)) == "ring/Simple");
}

// p5en's table (efa_region_p5en.cc, v1.21.1 region_init_internal_p5en) at 4 nodes: tree/LL128 to
// ~27 MiB, ring/LL128 to 280 MiB, NVLS-tree/Simple to 486 MiB; all_gather's Simple polygon starts
// at 472 MiB of the whole buffer.
TEST_CASE("EFA regions: p5en at 4 nodes runs its own table") {
  const topo::Topology p5en = topo::load_topology("aws-p5en-4");
  const auto at = [&](std::size_t bytes) {
    return choice(predict(p5en, fidelity::all_reduce_request(bytes)));
  };
  CHECK(at(16u << 20) == "tree/LL128");
  CHECK(at(256u << 20) == "ring/LL128");
  CHECK(at(384u << 20) == "nvls_tree/Simple");
  CHECK(at(512u << 20) == "ring/Simple");
  const int ranks = p5en.gpu_count();
  CHECK(choice(predict(p5en, fidelity::all_gather_request(std::size_t{256} << 20, ranks))) ==
        "ring/LL128");
  CHECK(choice(predict(p5en, fidelity::all_gather_request(std::size_t{512} << 20, ranks))) ==
        "ring/Simple");
}

// p6-b300's table (efa_region_p6_b300.cc, v1.21.1 region_init_internal_p6_b300) at 4 and 8 nodes:
// ring/LL128 to 576 MiB then ring/Simple on 32 ranks; NVLS-tree between them on 64 ranks (960 MiB -
// 1.875 GiB), where p6-b200's table runs ring/Simple from 1 GiB.
TEST_CASE("EFA regions: p6-b300 runs its own table") {
  const auto at = [](const char* preset, std::size_t bytes) {
    return choice(predict(topo::load_topology(preset), fidelity::all_reduce_request(bytes)));
  };
  CHECK(at("aws-p6-b300-4", 32u << 20) == "tree/LL128");
  CHECK(at("aws-p6-b300-4", 512u << 20) == "ring/LL128");
  CHECK(at("aws-p6-b300-4", std::size_t{1} << 30) == "ring/Simple");
  CHECK(at("aws-p6-b300-8", std::size_t{1} << 30) == "nvls_tree/Simple");
  CHECK(at("aws-p6-b200-8", std::size_t{1} << 30) != "nvls_tree/Simple");
  const topo::Topology b300 = topo::load_topology("aws-p6-b300-4");
  CHECK(choice(predict(b300, fidelity::all_gather_request(std::size_t{2} << 20, 32))) == "ring/LL");
  CHECK(choice(predict(b300, fidelity::all_gather_request(std::size_t{512} << 20, 32))) ==
        "ring/LL128");
}

// Every table stays on its platform: 2 nodes go back to NCCL (nccl_ofi_regions.cpp:2011-2013);
// p6-b200, p6-b300 and p5en run their own.
TEST_CASE("EFA regions: the tables stay on their platforms from 3 nodes") {
  const Request r = fidelity::all_reduce_request(256u << 20);
  const auto chooser = [&](const char* preset) {
    for (const Prediction& p : compare_all(topo::load_topology(preset), r)) {
      if (p.tuner_choice) return p.chosen_by;
    }
    return std::string("no choice");
  };
  CHECK(chooser("aws-p6-b200-4") == "aws-ofi-nccl's region tuner");
  CHECK(chooser("aws-p6-b200-2").empty());
  CHECK(chooser("aws-p6-b300-4") == "aws-ofi-nccl's region tuner");
  CHECK(chooser("aws-p6-b300-2").empty());
  CHECK(chooser("aws-p5en-4") == "aws-ofi-nccl's region tuner");
}
