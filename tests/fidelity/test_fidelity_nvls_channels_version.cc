// NCCL's NVLS channel count on Blackwell by version: 32 in one NVLink domain before 2.27
// (NVIDIA/nccl v2.25.1-1 src/transport/nvls.cc:145,176 NVLS_NCHANNELS_SM100 whatever the domain),
// 24 from 2.27 (v2.27.3-1 :149,193 NVLS_NCHANNELS_SM100_NVL for one domain, 32 across domains).
// The channels set how many chunks an NVLS all_reduce runs at once (channels x heads), hence its
// chunk size, steps and fill (sim/src/nvls_steps.cc). coreweave#43's rack of 72 GB200 ran NCCL
// 2.25.1 (docs/fidelity-sources.md); the model priced it with 24 channels until this change
// (docs/fidelity.md, "NVLS over 64-72 GPUs of a rack").
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>

#include "../../sim/src/model.h"
#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

TEST_CASE("NVLS channels on Blackwell: 32 in one NVLink domain before NCCL 2.27, 24 from it") {
  const auto ops = [](const char* preset, int ranks, int version) {
    detail::TopologyView v = detail::view_of(topo::load_topology(preset), ranks);
    v.nccl_version = version;
    return detail::nccl_nvls_ops(v);
  };
  // 72 GPUs of a rack: 32 heads (NCCL_MAX_NVLS_ARITY).
  CHECK(ops("gb200-nvl72", 72, 22501) == 32.0 * 32.0);
  CHECK(ops("gb200-nvl72", 72, 22606) == 32.0 * 32.0);
  CHECK(ops("gb200-nvl72", 72, 22703) == 24.0 * 32.0);
  CHECK(ops("gb200-nvl72", 72, 0) == 24.0 * 32.0);  // the newest model
  // 8 B200s in one box: the same rule (one NVLink domain), 8 heads.
  CHECK(ops("dgx-b200", 8, 22501) == 32.0 * 8.0);
  CHECK(ops("dgx-b200", 8, 22807) == 24.0 * 8.0);
  // Across NVLink domains every version has 32; Hopper 16.
  // 2 racks of 64 (NVLS-tree: 32 heads a rack, NCCL_MAX_NVLS_ARITY), 32 channels at any version.
  CHECK(ops("gb200-nvl72-cluster-2x64", 128, 22501) == 32.0 * 32.0);
  CHECK(ops("gb200-nvl72-cluster-2x64", 128, 22807) == 32.0 * 32.0);
  CHECK(ops("dgx-h100", 8, 22501) == 16.0 * 8.0);
}

TEST_CASE("coreweave#43's 72 GB200 on NCCL 2.25.1: 32 NVLS channels, closer at 512 MiB - 1 GiB") {
  const topo::Topology rack = topo::load_topology("gb200-nvl72");
  const auto error = [&](std::size_t bytes, double measured_us) {
    Request r = fidelity::all_reduce_request(bytes);
    r.nccl_version = 22501;
    return predict(rack, r).time_us / measured_us - 1.0;
  };
  // With 24 channels: -21.0% / -15.3% (scripts/fidelity-report.sh --rows before this change).
  CHECK(std::abs(error(std::size_t{512} << 20, 1806.7)) < 0.20);
  CHECK(std::abs(error(std::size_t{1} << 30, 3108.8)) < 0.15);
}
