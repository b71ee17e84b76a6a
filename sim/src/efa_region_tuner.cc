// AWS's region tuner (aws-ofi-nccl's tuner plugin) on p5/p5e, p5en, p6-b200 and p6-b300: which
// algorithm and protocol a call runs at 3 or more nodes of 8 GPUs, in place of NCCL's ranking.
//
// How it works (aws/aws-ofi-nccl v1.21.1 src/tuner/nccl_ofi_regions.cpp; the p5/p5e table is the
// same in v1.16.3): the plugin places a call at the point (log2 nBytes, log2 nRanks) and walks a
// list of polygons drawn in that plane (region_init_internal_p5_p5e, :668-765, for nRanks = 8 x
// nNodes, all_reduce only); the first polygon holding the point, inside or on an edge
// (is_inside_region, :159), names the algorithm and protocol (region_get_coll_info_internal_v2,
// :1989-2050). Two nodes or fewer, or a point outside every polygon, go back to NCCL's ranking
// (:2011-2013). Three polygons reach to the plugin's corner (100 GiB, 2^20 ranks,
// include/tuner/nccl_ofi_tuner_region.h:69-74) along the line of two of their vertices
// (extend_region, :254-290). For 4 nodes (32 ranks): tree/LL128 to 36 MiB, ring/LL128 to ~1.35
// GiB, then ring/Simple; NCCL's own ranking would take NVLS-tree from 128 MiB.
// The network class `efa` is that platform (network_class.h); p5en, p6-b200 and p6-b300 (`efa-v3`)
// follow their own tables, all_gather and reduce_scatter too (efa_region_p5en.cc,
// efa_region_p6.cc, efa_region_p6_b300.cc). Assumed: the plugin's tuner is loaded, as AWS's images
// and the published p5 runs do (NCCL_TUNER_PLUGIN).
#include <cmath>
#include <cstddef>
#include <vector>

#include "efa_regions.h"
#include "model.h"

namespace twinccl::sim::detail {

RegionPoint region_extend(RegionPoint a, RegionPoint b) {
  const RegionPoint corner = region_corner();
  if (a.x == b.x) return {a.x, corner.y};
  if (a.y == b.y) return {corner.x, a.y};
  const double m = (a.y - b.y) / (a.x - b.x);
  const double c = b.y - m * b.x;
  const double y = m * corner.x + c;
  return y < corner.y ? RegionPoint{corner.x, y} : RegionPoint{(corner.y - c) / m, corner.y};
}

std::vector<Region> ring_staircase(const std::vector<RegionPoint>& ll,
                                   const std::vector<RegionPoint>& ll128,
                                   const std::vector<RegionPoint>& simple) {
  const RegionPoint ll_end = region_extend(ll[ll.size() - 2], ll.back());
  const RegionPoint ll128_end = region_extend(ll128[ll128.size() - 2], ll128.back());
  std::vector<RegionPoint> lows{region_at(0.0, 16)};
  lows.insert(lows.end(), ll.begin(), ll.end());
  lows.push_back(ll_end);
  lows.push_back(region_zero_max_ranks());
  std::vector<RegionPoint> middle{ll_end};
  middle.insert(middle.end(), ll.rbegin(), ll.rend());
  middle.insert(middle.end(), ll128.begin(), ll128.end());
  middle.push_back(ll128_end);
  const std::vector<RegionPoint>& upper = simple.empty() ? ll128 : simple;
  std::vector<RegionPoint> highs{ll128_end};
  highs.insert(highs.end(), upper.rbegin(), upper.rend());
  highs.push_back(region_max_size_16());
  return {{"ring", Protocol::ll, lows},
          {"ring", Protocol::ll128, middle},
          {"ring", Protocol::simple, highs}};
}

const std::vector<Region>* PlatformRegions::of(OpKind kind) const {
  switch (kind) {
    case OpKind::all_reduce:
      return &all_reduce;
    case OpKind::all_gather:
      return &all_gather;
    case OpKind::reduce_scatter:
      return &reduce_scatter;
    default:
      return nullptr;
  }
}

namespace {

using Point = RegionPoint;

Point at(double bytes, double ranks) { return region_at(bytes, ranks); }
Point extend(Point a, Point b) { return region_extend(a, b); }

const Point kCorner = region_corner();

double cross(Point o, Point a, Point b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}

bool on_segment(Point p, Point a, Point b) {
  constexpr double eps = 1e-10;
  const double len = std::hypot(b.x - a.x, b.y - a.y);
  if (len < eps) return std::hypot(p.x - a.x, p.y - a.y) < eps;
  if (std::abs(cross(a, b, p)) / len > eps) return false;
  const double t = ((p.x - a.x) * (b.x - a.x) + (p.y - a.y) * (b.y - a.y)) / (len * len);
  return t >= -eps && t <= 1.0 + eps;
}

// Inside or on an edge: an edge first, then even-odd crossings of the segment from the point
// to a point beyond every polygon (the plugin's test, :159-221).
bool holds(const Region& r, Point p) {
  const std::size_t n = r.vertices.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (on_segment(p, r.vertices[i], r.vertices[(i + 1) % n])) return true;
  }
  const Point far = at(2.0 * 100.0 * 1024 * 1024 * 1024, 2.0 * 1024 * 1024);
  int crosses = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Point a = r.vertices[i], b = r.vertices[(i + 1) % n];
    const double d1 = cross(p, far, a), d2 = cross(p, far, b);
    const double d3 = cross(a, b, p), d4 = cross(a, b, far);
    if (((d1 > 0) != (d2 > 0)) && ((d3 > 0) != (d4 > 0))) ++crosses;
  }
  return (crosses & 1) != 0;
}

// region_init_internal_p5_p5e, nRanks = 8 x nNodes, all_reduce (v1.21.1 :668-765), in order.
const std::vector<Region>& p5_all_reduce_regions() {
  static const std::vector<Region> regions = [] {
    const Point tree_ll128_end = extend(at(402653184, 2048), at(402653184, 4096));
    const Point nvls_tree_end_1 = extend(at(8053063680, 160), at(9663676416, 192));
    const Point nvls_tree_end_2 = tree_ll128_end;
    const Point ring_simple_end = nvls_tree_end_1;
    return std::vector<Region>{
        {"tree",
         Protocol::ll128,
         {at(1e-6, 16),
          at(31457280, 16),
          at(37748736, 32),
          at(117440512, 64),
          at(301989888, 128),
          at(301989888, 256),
          at(335544320, 512),
          at(536870912, 1024),
          at(402653184, 2048),
          at(402653184, 4096),
          tree_ll128_end,
          {std::log2(1e-6), tree_ll128_end.y}}},
        {"nvls_tree", Protocol::simple, {at(31457281, 16), {kCorner.x, 4.0}, at(31457281, 16)}},
        {"ring",
         Protocol::ll128,
         {at(31457280, 17), at(1073741824, 17), at(2147483648, 64), at(2147483648, 128),
          at(1342177280, 160), at(2147483648, 256), at(1074790400, 256), at(444596224, 160),
          at(301989888, 128), at(117440512, 64), at(37748736, 32)}},
        {"nvls_tree",
         Protocol::simple,
         {at(2147483648, 128), at(6442450944, 128), at(8053063680, 160), at(9663676416, 192),
          nvls_tree_end_1, nvls_tree_end_2, at(402653184, 4096), at(402653184, 2048),
          at(536870912, 1024), at(335544320, 512), at(301989888, 256), at(310378496, 160),
          at(444596224, 160), at(1074790400, 256), at(2684354560, 256), at(2147483648, 224),
          at(1342177280, 160)}},
        {"ring",
         Protocol::simple,
         {at(1073741824, 17),
          {ring_simple_end.x, std::log2(17.0)},
          ring_simple_end,
          at(9663676416, 192),
          at(8053063680, 160),
          at(2684354560, 64),
          at(1610612736, 32)}},
    };
  }();
  return regions;
}

// The plugin's platform, from what the topology says (the plugin names the instance type,
// v1.21.1 include/tuner/nccl_ofi_tuner_process_config.h:40-48): `efa` is p5/p5e; `efa-v3` with
// Hopper GPUs is p5en, with Blackwell GPUs and one NIC a GPU p6-b200 at 400 Gb/s, p6-b300 above it
// (800 Gb/s a GPU, 2 x 400G).
const std::vector<Region>* regions_for(const TopologyView& v, OpKind kind) {
  if (v.network == topo::NetworkClass::efa) {
    return kind == OpKind::all_reduce ? &p5_all_reduce_regions() : nullptr;
  }
  constexpr double k400GbitGBps = 50.0;
  if (v.network != topo::NetworkClass::efa_v3) return nullptr;
  if (v.arch == topo::GpuArch::hopper) return p5en_regions().of(kind);
  if (v.arch != topo::GpuArch::blackwell || v.nics_per_node != v.ranks_per_node) return nullptr;
  return (v.nic_gbps <= k400GbitGBps ? p6_regions() : p6_b300_regions()).of(kind);
}

}  // namespace

std::optional<RegionChoice> efa_region_choice(const TopologyView& v, OpKind kind, double bytes) {
  const std::vector<Region>* regions = regions_for(v, kind);
  if (regions == nullptr || v.nodes <= 2 || v.nranks != 8 * v.nodes || !(bytes > 0.0)) {
    return std::nullopt;
  }
  // NCCL hands the tuner the whole buffer of an all_gather / reduce_scatter (nRanks x count,
  // NVIDIA/nccl v2.28.9-1 src/enqueue.cc:1923, src/include/enqueue.h ncclFuncMaxSendRecvCount).
  const bool gathered = kind == OpKind::all_gather || kind == OpKind::reduce_scatter;
  const Point p = at(gathered ? bytes * v.nranks : bytes, v.nranks);
  for (const Region& r : *regions) {
    if (holds(r, p)) return RegionChoice{r.algorithm, r.protocol};
  }
  return std::nullopt;
}

}  // namespace twinccl::sim::detail
