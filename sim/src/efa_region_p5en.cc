// AWS's region tuner on p5en (aws-ofi-nccl's tuner plugin, platform NCCL_OFI_TUNER_P5EN): the
// algorithm and protocol its polygons give all_reduce, all_gather and reduce_scatter at 8 GPUs a
// node, read from aws/aws-ofi-nccl v1.21.1 src/tuner/nccl_ofi_regions.cpp
// region_init_internal_p5en (:295-485; the nRanks = nNodes tables below it are not carried). The
// plane, the corner, the walk and the staircase shape are efa_regions.h / efa_region_tuner.cc's.
//
// How it reads, at 4 nodes (32 ranks): all_reduce tree/LL to 192 KiB, tree/LL128 to ~27 MiB,
// ring/LL128 to 280 MiB, NVLS-tree/Simple to 486 MiB, then ring/Simple; all_gather ring/LL to
// ~1.35 MiB, ring/LL128 to ~456 MiB (its nBytes the whole gathered buffer), then ring/Simple
// from 472 MiB.
// No published p5en run at 3+ nodes judges it (docs/fidelity.md, "AWS's p6 region tuner").
#include <vector>

#include "efa_regions.h"

namespace twinccl::sim::detail {
namespace {

RegionPoint at(double bytes, double ranks) { return region_at(bytes, ranks); }

std::vector<Region> all_reduce_regions() {
  const RegionPoint tree_ll_end = region_extend(at(196608, 192), at(196608, 1024));
  const RegionPoint tree_ll128_end = region_extend(at(129499136, 127), at(218103808, 1024));
  const RegionPoint nvls_tree_end = region_extend(at(7516192768, 256), at(17179869184, 448));
  return {
      {"tree",
       Protocol::ll,
       {at(0, 16), at(196608, 16), at(196608, 1024), tree_ll_end, region_zero_max_ranks()}},
      {"tree",
       Protocol::ll128,
       {tree_ll_end, at(196608, 1024), at(196608, 16), at(13107200, 16), at(129499136, 127),
        at(218103808, 1024), tree_ll128_end}},
      {"ring",
       Protocol::ll128,
       {at(129499136, 127), at(13107200, 16), at(29884416, 16), at(293601280, 32),
        at(589299712, 64), at(549453824, 128)}},
      {"nvls_tree",
       Protocol::simple,
       {tree_ll128_end, at(218103808, 1024), at(129499136, 127), at(549453824, 128),
        at(589299712, 64), at(293601280, 32), at(29884416, 16), region_max_size_16(),
        at(509607936, 32), at(7516192768, 256), at(17179869184, 448), nvls_tree_end}},
      {"ring",
       Protocol::simple,
       {nvls_tree_end, at(17179869184, 448), at(7516192768, 256), at(509607936, 32),
        region_max_size_16()}},
  };
}

}  // namespace

const PlatformRegions& p5en_regions() {
  // all_gather (:375-430): the Simple polygon walks the second staircase through one more point
  // (472 MiB at 32 ranks) than the LL128 one; a point between the two is in neither (NCCL ranks).
  // reduce_scatter (:432-484).
  static const PlatformRegions regions{
      all_reduce_regions(),
      ring_staircase(
          {at(786432, 16), at(4718592, 128), at(13630464, 384), at(19922944, 512),
           at(28305408, 768), at(33554432, 1024)},
          {at(236978176, 16), at(956301312, 64), at(7247754240, 384), at(17179865088, 896)},
          {at(236978176, 16), at(494927872, 32), at(956301312, 64), at(7247754240, 384),
           at(17179865088, 896)}),
      ring_staircase({at(786432, 16), at(4718592, 128), at(7340032, 256), at(18874368, 512)},
                     {at(291504128, 16), at(589299712, 32), at(2415919104, 128),
                      at(7247757312, 256), at(17179869184, 640)}),
  };
  return regions;
}

}  // namespace twinccl::sim::detail
