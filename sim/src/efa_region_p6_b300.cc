// AWS's region tuner on p6-b300 (aws-ofi-nccl's tuner plugin, platform NCCL_OFI_TUNER_P6_B300): the
// algorithm and protocol its polygons give all_reduce, all_gather and reduce_scatter at 8 GPUs a
// node, read from aws/aws-ofi-nccl v1.21.1 src/tuner/nccl_ofi_regions.cpp
// region_init_internal_p6_b300 (:1335-1598; the nRanks = nNodes tables below it are not
// carried). The plane, the corner, the walk and the staircase shape are efa_regions.h /
// efa_region_tuner.cc's.
//
// How it reads, at 4 nodes (32 ranks): all_reduce tree/LL to 480 KiB, tree/LL128 to 52 MiB,
// ring/LL128 to 576 MiB, then ring/Simple (NVLS-tree/Simple between the two from 8 nodes: 960 MiB
// - 1.875 GiB at 64 ranks); all_gather and reduce_scatter ring/LL to 3.25 MiB, ring/LL128 to 832 /
// 704 MiB, then ring/Simple. No published p6-b300 run at 3+ nodes judges it (docs/fidelity.md,
// "AWS's p6 region tuner").
#include <vector>

#include "efa_regions.h"

namespace twinccl::sim::detail {
namespace {

RegionPoint at(double bytes, double ranks) { return region_at(bytes, ranks); }

std::vector<Region> all_reduce_regions() {
  const RegionPoint tree_ll_end = region_extend(at(360448, 1024), at(360448, 2048));
  const RegionPoint tree_ll128_end = region_extend(at(218103808, 1024), at(251658240, 2048));
  const RegionPoint nvls_tree_end = region_extend(at(9663676416, 256), at(19327352832, 512));
  const std::vector<RegionPoint> ll_stairs{at(720896, 16),   at(491520, 32),  at(425984, 64),
                                           at(425984, 128),  at(425984, 256), at(360448, 512),
                                           at(360448, 1024), at(360448, 2048)};
  std::vector<RegionPoint> tree_ll{at(0, 16)};
  tree_ll.insert(tree_ll.end(), ll_stairs.begin(), ll_stairs.end());
  tree_ll.push_back(tree_ll_end);
  tree_ll.push_back(region_zero_max_ranks());
  std::vector<RegionPoint> tree_ll128{tree_ll_end};
  tree_ll128.insert(tree_ll128.end(), ll_stairs.rbegin(), ll_stairs.rend());
  for (const RegionPoint p : {at(31457280, 16), at(54525952, 32), at(109051904, 64),
                              at(125829120, 128), at(125829120, 256), at(184549376, 512),
                              at(218103808, 1024), at(251658240, 2048), tree_ll128_end}) {
    tree_ll128.push_back(p);
  }
  return {
      {"tree", Protocol::ll, tree_ll},
      {"tree", Protocol::ll128, tree_ll128},
      {"ring",
       Protocol::ll128,
       {at(369098752, 128), at(109051904, 64), at(54525952, 32), at(31457280, 16), at(62914560, 16),
        at(603979776, 32), at(1006632960, 64), at(1006632960, 128)}},
      {"nvls_tree",
       Protocol::simple,
       {tree_ll128_end, at(251658240, 2048), at(218103808, 1024), at(184549376, 512),
        at(125829120, 256), at(125829120, 128), at(109051904, 64), at(369098752, 128),
        at(1006632960, 128), at(1006632960, 64), at(603979776, 32), at(62914560, 16),
        region_max_size_16(), at(603979776, 32), at(2013265920, 64), at(4026531840, 128),
        at(9663676416, 256), at(19327352832, 512), nvls_tree_end}},
      {"ring",
       Protocol::simple,
       {nvls_tree_end, at(19327352832, 512), at(9663676416, 256), at(4026531840, 128),
        at(2013265920, 64), at(603979776, 32), region_max_size_16()}},
  };
}

}  // namespace

const PlatformRegions& p6_b300_regions() {
  // all_gather (:1456-1526) and reduce_scatter (:1528-1597) after all_reduce: the same ring/LL
  // staircase, their ring/LL128 ones apart below 128 ranks.
  static const std::vector<RegionPoint> ll{
      at(1703936, 16),   at(3407872, 32),   at(6815744, 64),     at(13631488, 128),
      at(27262976, 256), at(54525952, 512), at(109051904, 1024), at(218103808, 2048)};
  static const PlatformRegions regions{
      all_reduce_regions(),
      ring_staircase(ll,
                     {at(436207616, 16), at(872415232, 32), at(1744830464, 64), at(3489660928, 128),
                      at(6979321856, 256), at(13958643712, 512), at(27917287424, 1024)}),
      ring_staircase(ll,
                     {at(301989888, 16), at(738197504, 32), at(1207959552, 64), at(3489660928, 128),
                      at(6979321856, 256), at(13958643712, 512), at(27917287424, 1024)}),
  };
  return regions;
}

}  // namespace twinccl::sim::detail
