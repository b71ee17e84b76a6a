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

// extend_region (v1.21.1 src/tuner/nccl_ofi_regions.cpp:254-290): the point of the line a-b that
// reaches the corner's x or y, whichever comes first.
RegionPoint region_extend(RegionPoint a, RegionPoint b);

struct Region {
  const char* algorithm;  // the registry's name
  Protocol protocol;
  std::vector<RegionPoint> vertices;
};

// AWS p6-b200's tables at 8 GPUs a node (efa_region_p6.cc): all_reduce, all_gather and
// reduce_scatter; nullptr for another collective.
const std::vector<Region>* p6_regions(OpKind kind);

}  // namespace twinccl::sim::detail
