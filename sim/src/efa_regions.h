// Internal: the polygons of AWS's region tuner (aws-ofi-nccl's tuner plugin) as the model reads
// them, one owner for the plane they are drawn in (efa_region_tuner.cc walks them). A point is
// (log2 nBytes, log2 nRanks); 0 bytes stand for 1e-6, as the plugin's transform_log2 does
// (v1.21.1 include/tuner/nccl_ofi_tuner_region.h:87-100).
#pragma once

#include <cmath>
#include <vector>

#include "model.h"

namespace twinccl::sim::detail {

struct RegionPoint {
  double x, y;  // log2 bytes, log2 ranks
};

inline RegionPoint region_at(double bytes, double ranks) {
  return {std::log2(bytes > 0.0 ? bytes : 1e-6), std::log2(ranks)};
}

// The plugin's corner: TUNER_MAX_SIZE (100 GiB) and TUNER_MAX_RANKS (2^20)
// (v1.21.1 include/tuner/nccl_ofi_tuner_region.h:69-74).
inline RegionPoint region_corner() { return region_at(100.0 * 1024 * 1024 * 1024, 1024.0 * 1024); }

// The two corners the tables' outer walls end at: (TUNER_MAX_SIZE, 16 ranks) and (0 bytes,
// TUNER_MAX_RANKS).
inline RegionPoint region_max_size_16() { return {region_corner().x, 4.0}; }
inline RegionPoint region_zero_max_ranks() { return region_at(0.0, 1024.0 * 1024); }

// extend_region (v1.21.1 src/tuner/nccl_ofi_regions.cpp:254-290): the point of the line a-b that
// reaches the corner's x or y, whichever comes first.
RegionPoint region_extend(RegionPoint a, RegionPoint b);

struct Region {
  const char* algorithm;  // the registry's name
  Protocol protocol;
  std::vector<RegionPoint> vertices;
};

// The shape the plugin's all_gather and reduce_scatter tables share: ring/LL below a staircase,
// ring/LL128 up to a second one, ring/Simple above. `ll` and `ll128` are the staircases from 16
// ranks up, each ending in the line its last two points draw to the corner; `simple` is the
// Simple polygon's own walk of the second staircase where the plugin draws it with other points
// (p5en's all_gather; empty = the same points).
std::vector<Region> ring_staircase(const std::vector<RegionPoint>& ll,
                                   const std::vector<RegionPoint>& ll128,
                                   const std::vector<RegionPoint>& simple = {});

// One platform's tables at 8 GPUs a node: all_reduce, all_gather and reduce_scatter; `of` gives a
// collective's, nullptr for another (efa_region_tuner.cc).
struct PlatformRegions {
  std::vector<Region> all_reduce, all_gather, reduce_scatter;
  const std::vector<Region>* of(OpKind kind) const;
};
// p6-b200's (efa_region_p6.cc), p6-b300's (efa_region_p6_b300.cc) and p5en's
// (efa_region_p5en.cc).
const PlatformRegions& p6_regions();
const PlatformRegions& p6_b300_regions();
const PlatformRegions& p5en_regions();

}  // namespace twinccl::sim::detail
