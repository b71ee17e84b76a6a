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
  // Literal figures, so a wrong owner fails: NVLS channels (transport/nvls.cc, as above), heads
  // (one per GPU of a node, at most NCCL_MAX_NVLS_ARITY = 32, device.h; across nodes one per NIC)
  // and the bytes that time a 64 KiB all_reduce (before 2.20.3 on one node: channels x 64 KiB).
  struct Case {
    const char* preset;
    int ranks, version;
    double channels, heads, timed_bytes;
  };
  constexpr double k64 = 64.0 * 1024.0;
  const Case cases[] = {{"dgx-h100", 8, 21805, 16.0, 8.0, 16.0 * k64},  // 1048576
                        {"dgx-b200", 8, 21805, 32.0, 8.0, 32.0 * k64},  // 2097152
                        {"dgx-b200", 8, 22501, 32.0, 8.0, k64},
                        {"dgx-b200", 8, 22703, 24.0, 8.0, k64},
                        {"dgx-b200", 8, 0, 24.0, 8.0, k64},
                        {"gb200-nvl72", 72, 21805, 32.0, 32.0, 32.0 * k64},
                        {"gb200-nvl72", 72, 0, 24.0, 32.0, k64},
                        {"gb200-nvl72-cluster-2x64", 128, 22501, 32.0, 32.0, k64}};
  for (const Case& c : cases) {
    INFO(c.preset << " " << c.ranks << " ranks, NCCL " << c.version);
    const detail::TopologyView v = view(c.preset, c.ranks, c.version);
    CHECK(detail::nccl_nvls_channels(v) == c.channels);
    CHECK(detail::nccl_nvls_heads(v) == c.heads);
    CHECK(detail::nccl_nvls_ops(v) == c.channels * c.heads);
    const detail::NvlsSteps steps = detail::nccl_nvls_steps(v, detail::NcclAlgo::nvls, k64);
    CHECK(steps.channels == c.channels);
    CHECK(steps.heads == c.heads);
    CHECK(steps.ops == c.channels * c.heads);
    // 64 KiB is within one channel's share of a step (heads x a 16 KiB chunk): before 2.20.3 it
    // runs on channel 0 alone and is timed as every channel carrying it, channels x 64 KiB.
    REQUIRE(k64 <= steps.heads * steps.chunk_bytes);
    CHECK(detail::nvls_busiest_channel_bytes(v, detail::NcclAlgo::nvls, OpKind::all_reduce, k64) ==
          c.timed_bytes);
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
