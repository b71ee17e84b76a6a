// One owner of NCCL's NVLS channel count (sim/src/nvls_steps.cc nccl_nvls_channels): every figure
// that needs it reads it there, so the concurrent operations (channels x heads), a call's steps
// and the grid stride before NCCL 2.20.3 (nvls_grid_stride.cc) agree on it for every architecture
// and version. Before this test the grid stride picked Blackwell's 24 one-domain channels again
// for itself, while the steps it divided by had NCCL 2.25's 32 (kNcclVersionTerms): a second
// derivation that diverged (checked: this test failed on that code).
#include <catch2/catch.hpp>
#include <cmath>

#include "../../sim/src/model.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

detail::TopologyView view(const char* preset, int ranks, int version) {
  detail::TopologyView v = detail::view_of(topo::load_topology(preset), ranks);
  v.nccl_version = version;
  return v;
}

}  // namespace

TEST_CASE("NVLS channels: the owner's count, by architecture and NCCL version") {
  // transport/nvls.cc: Hopper 16; Blackwell 32 across NVLink domains, in one 32 before 2.27
  // (NVLS_NCHANNELS_SM100) and 24 from it (NVLS_NCHANNELS_SM100_NVL).
  CHECK(detail::nccl_nvls_channels(view("dgx-h100", 8, 21805)) == 16.0);
  CHECK(detail::nccl_nvls_channels(view("dgx-h100", 8, 0)) == 16.0);
  CHECK(detail::nccl_nvls_channels(view("dgx-b200", 8, 21805)) == 32.0);
  CHECK(detail::nccl_nvls_channels(view("dgx-b200", 8, 22501)) == 32.0);
  CHECK(detail::nccl_nvls_channels(view("dgx-b200", 8, 22703)) == 24.0);
  CHECK(detail::nccl_nvls_channels(view("dgx-b200", 8, 0)) == 24.0);
  CHECK(detail::nccl_nvls_channels(view("gb200-nvl72-cluster-2x64", 128, 22807)) == 32.0);
}

TEST_CASE("NVLS channels: the steps and the pre-2.20.3 grid stride read the owner's count") {
  struct Case {
    const char* preset;
    int ranks, version;
  };
  // The grid stride applies before 2.20.3 on one node: Hopper as NCCL 2.18.5 ran it, Blackwell at
  // the same version (32 channels in one domain before 2.27); and the versions either side of 2.27.
  const Case cases[] = {{"dgx-h100", 8, 21805}, {"dgx-b200", 8, 21805},
                        {"dgx-b200", 8, 22501}, {"dgx-b200", 8, 22703},
                        {"dgx-b200", 8, 0},     {"gb200-nvl72", 72, 21805},
                        {"gb200-nvl72", 72, 0}, {"gb200-nvl72-cluster-2x64", 128, 22501}};
  for (const Case& c : cases) {
    INFO(c.preset << " " << c.ranks << " ranks, NCCL " << c.version);
    const detail::TopologyView v = view(c.preset, c.ranks, c.version);
    const double channels = detail::nccl_nvls_channels(v);
    CHECK(detail::nccl_nvls_ops(v) == channels * detail::nccl_nvls_heads(v));
    const double bytes = 64.0 * 1024.0;
    const detail::NvlsSteps steps = detail::nccl_nvls_steps(v, detail::NcclAlgo::nvls, bytes);
    CHECK(steps.channels == channels);
    CHECK(steps.ops == detail::nccl_nvls_ops(v));
    // 64 KiB is within one channel's share of a step (heads x a 16 KiB chunk): before 2.20.3 it
    // runs on channel 0 alone and is timed as every channel carrying it, channels x 64 KiB.
    REQUIRE(bytes <= steps.heads * steps.chunk_bytes);
    const double timed =
        detail::nvls_busiest_channel_bytes(v, detail::NcclAlgo::nvls, OpKind::all_reduce, bytes);
    const bool grid_stride = v.nodes == 1 && c.version != 0 && c.version < 22003;
    CHECK(timed == (grid_stride ? channels * bytes : bytes));
  }
}

// A cost handed NvlsSteps{} (ops 0) instead of the call's steps divided by 0 (inf; checked: the
// step sync returned inf before check_nvls_steps): now an InternalError naming the cost.
TEST_CASE("NVLS steps: an uncomputed NvlsSteps is an internal error, not inf") {
  const detail::TopologyView v = view("dgx-b200", 8, 0);
  const double bytes = 64.0 * 1024.0 * 1024.0;
  CHECK_THROWS_AS(
      detail::nvls_step_sync_us(v, detail::NcclAlgo::nvls, OpKind::all_reduce, bytes, {}),
      InternalError);
  const detail::NvlsSteps steps = detail::nccl_nvls_steps(v, detail::NcclAlgo::nvls, bytes);
  CHECK(std::isfinite(
      detail::nvls_step_sync_us(v, detail::NcclAlgo::nvls, OpKind::all_reduce, bytes, steps)));
}
