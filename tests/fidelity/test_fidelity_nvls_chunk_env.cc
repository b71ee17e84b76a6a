// NVLS all_reduce's chunk starts from NCCL_NVLS_CHUNKSIZE from NCCL 2.21 (NVIDIA/nccl v2.21.5-1
// src/enqueue.cc:1743 `maxChunkSize = comm->nvlsChunkSize`, the same to v2.30.7-1 :2263; 128 KiB
// hard-coded before, v2.20.3-1 :1704), at most one Simple step, and halves against that start: 64
// KiB while bytes < 64 x channels x heads x start. A cloud whose NCCL environment exports 512 KiB
// (aws-ofi-nccl on EFA, GCP's gIB: network_nccl_env.h) runs 512 KiB chunks from 4 GiB on 8 H100s
// (6 GiB on 8 B200s) and 64 KiB below; the model before took 128 KiB for NVLS whatever the class.
// gpu-tpu-pedia@d382ada's 8 B200s on GCP A4 (NCCL_NVLS_CHUNKSIZE=524288 in its job, held out) show
// it: 424 GB/s between 2 and 4 GiB, 486 between 8 and 16 (docs/fidelity.md, "NVLS's chunk from
// the cloud's NCCL_NVLS_CHUNKSIZE").
#include <catch2/catch.hpp>
#include <cstddef>

#include "../../sim/src/model.h"
#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

constexpr double kKiB = 1024.0;
constexpr double kGiB = kKiB * kKiB * kKiB;

// The chunk NCCL `version` (0 = the newest model) runs a one-node NVLS all_reduce of `bytes` with
// on `preset`, with NCCL_BUFFSIZE `buffsize_bytes` (0 = the preset's).
double nvls_chunk(const char* preset, int version, double bytes, double buffsize_bytes = 0.0) {
  detail::TopologyView v = detail::view_of(topo::load_topology(preset), 8);
  v.nccl_version = version;
  if (buffsize_bytes > 0.0) v.nccl_buffsize_bytes = buffsize_bytes;
  return detail::nccl_nvls_chunk_bytes(v, detail::NcclAlgo::nvls, bytes, detail::nccl_nvls_ops(v));
}

// GB/s the model gives the bytes between two sizes of a forced NVLS all_reduce on `preset`.
double marginal_gbps(const char* preset, std::size_t small, std::size_t large) {
  const topo::Topology t = topo::load_topology(preset);
  const double small_us = predict(t, fidelity::all_reduce_request(small, {}, "nvls")).time_us;
  const double large_us = predict(t, fidelity::all_reduce_request(large, {}, "nvls")).time_us;
  return static_cast<double>(large - small) / (1000.0 * (large_us - small_us));
}

}  // namespace

TEST_CASE("NVLS starts from the cloud's NCCL_NVLS_CHUNKSIZE from NCCL 2.21, 128 KiB before") {
  // 8 H100s on EFA (aws-ofi-nccl's 512 KiB), 16 channels x 8 heads: 512 KiB from 64 x 128 x 512
  // KiB = 4 GiB, 64 KiB below it (the old code: 128 KiB from 1 GiB).
  for (const int version : {0, 22105, 22707}) {
    INFO(version);
    CHECK(nvls_chunk("aws-p5-1", version, 8.0 * kGiB) == 512.0 * kKiB);
    CHECK(nvls_chunk("aws-p5-1", version, 2.0 * kGiB) == 64.0 * kKiB);
  }
  // NCCL 2.18 - 2.20: 128 KiB whatever the environment.
  for (const int version : {21805, 22005}) {
    INFO(version);
    CHECK(nvls_chunk("aws-p5-1", version, 8.0 * kGiB) == 128.0 * kKiB);
    CHECK(nvls_chunk("aws-p5-1", version, 2.0 * kGiB) == 128.0 * kKiB);
  }
  // No export (InfiniBand): NCCL's 128 KiB at every version.
  CHECK(nvls_chunk("dgx-h100", 0, 8.0 * kGiB) == 128.0 * kKiB);
  CHECK(nvls_chunk("dgx-h100", 22005, 2.0 * kGiB) == 128.0 * kKiB);
  // GCP's gIB on 8 B200s, 24 channels x 8 heads: 512 KiB from 6 GiB.
  CHECK(nvls_chunk("gcp-a4-1", 0, 8.0 * kGiB) == 512.0 * kKiB);
  CHECK(nvls_chunk("gcp-a4-1", 0, 4.0 * kGiB) == 64.0 * kKiB);
}

TEST_CASE("NVLS's start chunk is at most one Simple step (NCCL_BUFFSIZE / 8)") {
  // 512 KiB buffers: 64 KiB steps, below NCCL's 128 KiB.
  CHECK(nvls_chunk("dgx-h100", 0, 8.0 * kGiB, 512.0 * kKiB) == 64.0 * kKiB);
  // 2 MiB buffers under aws-ofi-nccl's 512 KiB: 256 KiB, halved from 64 x 128 x 256 KiB = 2 GiB.
  CHECK(nvls_chunk("aws-p5-1", 0, 4.0 * kGiB, 2048.0 * kKiB) == 256.0 * kKiB);
  CHECK(nvls_chunk("aws-p5-1", 0, 1.0 * kGiB, 2048.0 * kKiB) == 64.0 * kKiB);
}

TEST_CASE("8 B200s under GCP's gIB: 64 KiB chunks up to 6 GiB run below the 512 KiB plateau") {
  constexpr std::size_t kGiBytes = std::size_t{1} << 30;
  // Measured (gpu-tpu-pedia@d382ada): 2 -> 4 GiB 423.7 GB/s, 8 -> 16 GiB 486.4 GB/s: 0.87. The
  // 64 KiB chunks' extra steps (nvls_step_sync_us) price the first; the old code ran 128 KiB
  // there, no extra step, the plateau's rate (ratio 1.0, as dgx-b200 without an export still has).
  const double gib = marginal_gbps("gcp-a4-1", 2 * kGiBytes, 4 * kGiBytes);
  const double plateau = marginal_gbps("gcp-a4-1", 8 * kGiBytes, 16 * kGiBytes);
  CHECK(gib / plateau == Approx(0.87).margin(0.04));
  const double ib = marginal_gbps("dgx-b200", 2 * kGiBytes, 4 * kGiBytes) /
                    marginal_gbps("dgx-b200", 8 * kGiBytes, 16 * kGiBytes);
  CHECK(ib > 0.97);
}

TEST_CASE("NVLS-tree before NCCL 2.21 starts from one Simple step, 64 KiB from 4 nodes") {
  // v2.20.3-1 src/enqueue.cc:1687 (chunkSteps 1 off ring Simple), :1715-1717 (maxChunkSize =
  // NCCL_NVLSTREE_MAX_CHUNKSIZE, NCCL's -2: 64 KiB from 4 nodes, else the step); no
  // NCCL_NVLS_CHUNKSIZE before 2.21 (v2.21.5-1 src/transport/nvls.cc:233). Before: 128 KiB (or
  // the cloud's export) at every version.
  const auto chunk = [](const char* preset, int ranks, int version, double buffsize_bytes) {
    detail::TopologyView v = detail::view_of(topo::load_topology(preset), ranks);
    v.nccl_version = version;
    if (buffsize_bytes > 0.0) v.nccl_buffsize_bytes = buffsize_bytes;
    return detail::nccl_nvls_chunk_bytes(v, detail::NcclAlgo::nvls_tree, 8.0 * kGiB,
                                         detail::nccl_nvls_ops(v));
  };
  // 2 B200 nodes, 4 MiB buffers: a 512 KiB step (8 GiB keeps it); 512 KiB buffers: 64 KiB.
  CHECK(chunk("b200-cluster-2", 16, 22005, 0.0) == 512.0 * kKiB);
  CHECK(chunk("b200-cluster-2", 16, 22005, 512.0 * kKiB) == 64.0 * kKiB);
  CHECK(chunk("b200-cluster-4", 32, 22005, 0.0) == 64.0 * kKiB);
  // From 2.21, and a row whose version is unknown: NCCL_NVLS_CHUNKSIZE's 128 KiB.
  CHECK(chunk("b200-cluster-2", 16, 22105, 0.0) == 128.0 * kKiB);
  CHECK(chunk("b200-cluster-2", 16, 0, 0.0) == 128.0 * kKiB);
}
