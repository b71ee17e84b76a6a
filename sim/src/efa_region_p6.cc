// AWS's region tuner on p6-b200 (aws-ofi-nccl's tuner plugin, platform NCCL_OFI_TUNER_P6): the
// algorithm and protocol its polygons give all_reduce, all_gather and reduce_scatter at 8 GPUs a
// node, read from aws/aws-ofi-nccl v1.21.1 src/tuner/nccl_ofi_regions.cpp
// region_init_internal_p6 (:969-1181; the nRanks = nNodes tables below it are not carried). The
// plane, the corner and the walk are efa_regions.h / efa_region_tuner.cc's.
//
// How it reads, at 4 nodes (32 ranks): all_reduce tree/LL to 384 KiB, tree/LL128 to 17.5 MiB,
// ring/LL128 to 127.5 MiB, NVLS-tree/Simple to 415 MiB, then ring/Simple; all_gather ring/LL to
// 1.5 MiB, ring/LL128 to 435 MiB, then ring/Simple (its nBytes is NCCL's: the whole gathered
// buffer, enqueue.h ncclFuncMaxSendRecvCount).
//
// Not carried: the plugin's channel count for tree/LL128 all_reduce at 4 - 32 MB
// (calculateBestNChannelTree, :2140-2146), and the older plugin's p6 table (v1.16.3 :909-1010:
// ring/LL128 where v1.21.1 has NVLS-tree at 128 - 415 MiB on 4 nodes); the model carries the
// plugin version its p5 table is read from.
#include <vector>

#include "efa_regions.h"

namespace twinccl::sim::detail {
namespace {

RegionPoint at(double bytes, double ranks) { return region_at(bytes, ranks); }

std::vector<Region> all_reduce_regions() {
  const RegionPoint tree_ll_end = region_extend(at(393216, 16), at(393216, 1024));
  const RegionPoint tree_ll128_end = region_extend(at(96993280, 1024), at(106430464, 2048));
  const RegionPoint nvls_tree_end = region_extend(at(10737418240, 512), at(34359738368, 1500));
  return {
      {"tree", Protocol::ll, {at(0, 16), at(393216, 16), tree_ll_end, region_zero_max_ranks()}},
      {"tree",
       Protocol::ll128,
       {tree_ll_end, at(393216, 16), at(4718592, 16), at(18350080, 32), at(40370176, 64),
        at(57147392, 128), at(72876032, 256), at(96993280, 1024), at(106430464, 2048),
        tree_ll128_end}},
      {"ring",
       Protocol::ll128,
       {at(90701824, 128), at(50855936, 64), at(18350080, 32), at(133693440, 32),
        at(120061952, 64)}},
      {"nvls_tree",
       Protocol::simple,
       {tree_ll128_end, at(106430464, 2048), at(96993280, 1024), at(72876032, 256),
        at(57147392, 128), at(40370176, 64), at(18350080, 32), at(50855936, 64), at(90701824, 128),
        at(120061952, 64), at(133693440, 32), at(18350080, 32), at(4718592, 16),
        region_max_size_16(), at(435159040, 32), at(1072693248, 64), at(10737418240, 512),
        at(34359738368, 1500), nvls_tree_end}},
      {"ring",
       Protocol::simple,
       {nvls_tree_end, at(10737418240, 512), at(1072693248, 64), at(435159040, 32),
        region_max_size_16()}},
  };
}

}  // namespace

const PlatformRegions& p6_regions() {
  // all_gather (:1059-1118) and reduce_scatter (:1120-1180) after all_reduce.
  static const PlatformRegions regions{
      all_reduce_regions(),
      ring_staircase({at(786432, 16), at(1572864, 32), at(2621440, 64), at(4718592, 128),
                      at(17301504, 256), at(74973184, 1024), at(213385216, 2048)},
                     {at(198705152, 16), at(456130560, 32), at(871366656, 64), at(8321499136, 512),
                      at(32212254720, 2048)}),
      ring_staircase(
          {at(786432, 16), at(1572864, 32), at(2621440, 64), at(4718592, 128), at(17301504, 256),
           at(35127296, 512), at(73924608, 1024), at(209190912, 2048)},
          {at(219676672, 16), at(508559360, 32), at(592445440, 64), at(4294967296, 256),
           at(8589934592, 512)}),
  };
  return regions;
}

}  // namespace twinccl::sim::detail
