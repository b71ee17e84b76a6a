// The host's own -g N launch per GPU (sim/src/host_launch.h) as a preset fact: DGX H100/H200's
// Sapphire Rapids host launches a `-g 8` call in 8 x 3.2 us (topologies/presets/dgx_node.h
// kSapphireRapidsGroupLaunchUs), a GB200/GB300 tray's Grace a `-g 4` call in 4 x 3.84 us
// (gb200_nvl72.cc kGraceGroupLaunchUs); each fitted on one named row (docs/fidelity.md).
#include <catch2/catch.hpp>
#include <cstddef>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
Request all_reduce_4_bytes(std::size_t bytes, const char* algorithm, int nccl_version,
                           int gpus_per_thread) {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = bytes / 4;
  r.algorithm = algorithm;
  r.nccl_version = nccl_version;
  r.gpus_per_thread = gpus_per_thread;
  return r;
}
}  // namespace

TEST_CASE("DGX H200's host launches a -g 8 call's GPUs in 8 x 3.2 us", "[sim][host]") {
  const topo::Topology h200 = topo::dgx_h200();
  CHECK(h200.facts().group_launch_us == Approx(3.2));
  CHECK(topo::h200_cluster(2).facts().group_launch_us == Approx(3.2));
  // DGX H100 and Azure ND H100 v5 have that CPU too; a cloud node built on DGX H100's graph with
  // another host (AWS p5: AMD EPYC) keeps the default (docs/fidelity.md, "-g N host floor").
  CHECK(topo::dgx_h100().facts().group_launch_us == Approx(3.2));
  CHECK(topo::load_topology("azure-ndv5-2").facts().group_launch_us == Approx(3.2));
  CHECK(topo::load_topology("aws-p5-2").facts().group_launch_us == 0.0);
  // 4 KiB, 2.20.5: the kernels and one launch (30 us) outlast the 8 launches (25.6 us), where the
  // default 8 x 5 us was the time.
  const double kernels = predict(h200, all_reduce_4_bytes(4096, "nvls", 22005, 0)).time_us;
  CHECK(predict(h200, all_reduce_4_bytes(4096, "nvls", 22005, 8)).time_us == Approx(kernels + 5.0));
  CHECK(kernels + 5.0 > 8 * 3.2);
  CHECK(kernels + 5.0 < 40.0);
}

TEST_CASE("a GB200/GB300 tray's Grace launches a -g 4 call's GPUs in 4 x 3.84 us", "[sim][host]") {
  for (const char* preset :
       {"gb200-nvl72", "gb200-nvl72-cluster-1x4", "gb300-nvl72-cluster-2x64"}) {
    INFO(preset);
    CHECK(topo::load_topology(preset).facts().group_launch_us == Approx(3.84));
  }
  // 1 KiB ring/LL on one tray, -g 4: the 4 launches (15.36 us) where the default was 4 x 5 us.
  const topo::Topology tray = topo::load_topology("gb200-nvl72-cluster-1x4");
  CHECK(predict(tray, all_reduce_4_bytes(1024, "ring", 22501, 4)).time_us ==
        Approx(15.36).epsilon(0.01));
}
