// The alpha-beta model (what-if algorithms in analytic) prices an even call at its busiest rank
// and on the links its channels use, as flow plays them. Two gaps this holds down, found by
// bench/bench_flow_audit at 64 MiB:
// * halving_doubling on a world that is not a power of two priced rank 0's steps alone; rank 0
//   sits out there (it hands its data to rank 1 and waits), so the core's steps were free:
//   h100-cluster-3 all_reduce 377.2 us against flow's 3932.0, under the 2.4 ms rank 1 needs for
//   the bytes it must move one after another (below);
// * hierarchical on mi300x-8 ran its one ring order over one xGMI link per step, where flow runs
//   its channels over the mesh's link-disjoint ring orders: 2502.7 us against flow's 405.5, the
//   all_reduce bound over the GPU's 7 links being 349.5 us.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kElements = std::size_t{16} << 20;  // 64 MiB of float32
constexpr double kBytes = 4.0 * static_cast<double>(kElements);

// bytes over the slowest link of the route a -> b, at its line rate (flow's network links run
// slower: NCCL's share of a NIC), in us.
double route_us(const topo::Topology& t, int a, int b, double bytes) {
  double gbps = 0.0;
  for (const topo::LinkId l : t.route(a, b)) {
    const double g = t.link(l).bandwidth_gbps;
    gbps = gbps == 0.0 ? g : std::min(gbps, g);
  }
  return bytes / (gbps * 1e3);
}

// Halving_doubling all_reduce on n ranks, p the largest power of two <= n, e = n - p > 0 (so
// p / 2 >= e): rank 1 folds rank 0's whole buffer in before the core starts (S over 0 -> 1),
// exchanges half of it with its partner at distance p / 2 in the first halving level (real rank
// p / 2 + e: S / 2 out over 1 -> partner) and again in the last doubling level (S / 2 in), and
// hands the result back to rank 0 at the end (S over 1 -> 0). Each needs the one before, so their
// times add up: no schedule of these steps is faster.
double extra_partner_bound_us(const topo::Topology& t, int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  const int partner = p / 2 + (n - p);
  return route_us(t, 0, 1, kBytes) + route_us(t, 1, partner, kBytes / 2) +
         route_us(t, partner, 1, kBytes / 2) + route_us(t, 1, 0, kBytes);
}

Request all_reduce(const std::string& algorithm, int nranks) {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.nranks = nranks;
  r.spec.count = kElements;
  r.algorithm = algorithm;
  return r;
}
}  // namespace

TEST_CASE("halving_doubling off a power of two is priced at the extra ranks' partners") {
  // 24 ranks over 3 nodes (the partner at distance 8 is on another node: NICs), 72 NVLink GPUs.
  const std::string preset = GENERATE(as<std::string>{}, "h100-cluster-3", "gb200-nvl72");
  const topo::Topology t = topo::load_topology(preset);
  Request r = all_reduce("halving_doubling", t.gpu_count());
  const double bound_us = extra_partner_bound_us(t, t.gpu_count());
  const double analytic_us = predict(t, r).time_us;
  r.fidelity = Fidelity::flow;
  const double flow_us = predict(t, r).time_us;
  INFO(preset << ": bound " << bound_us << " us, analytic " << analytic_us << ", flow " << flow_us);
  CHECK(analytic_us >= bound_us);
  CHECK(flow_us >= bound_us);
}

TEST_CASE("halving_doubling on a power of two keeps its price and agrees with flow") {
  const topo::Topology t = topo::load_topology("h100-cluster-2");
  Request r = all_reduce("halving_doubling", t.gpu_count());
  const double analytic_us = predict(t, r).time_us;
  r.fidelity = Fidelity::flow;
  const double flow_us = predict(t, r).time_us;
  INFO("analytic " << analytic_us << " us, flow " << flow_us);
  CHECK(std::abs(flow_us / analytic_us - 1.0) < 0.05);
}

TEST_CASE("halving_doubling on 1032 ranks is priced at its extra ranks in bounded time") {
  // p = 1024, e = 8: ranks 0-15 pair up; past 1024 ranks alpha-beta prices a sample of the
  // roles (rank 0, the ranks either side of 2e, rank n-1), not every rank.
  const topo::Topology t = topo::load_topology("h100-cluster-129");
  REQUIRE(t.gpu_count() == 1032);
  const Request r = all_reduce("halving_doubling", 1032);
  const double analytic_us = predict(t, r).time_us;
  const double bound_us = extra_partner_bound_us(t, 1032);
  INFO("bound " << bound_us << " us, analytic " << analytic_us);
  CHECK(analytic_us >= bound_us);
}

TEST_CASE("hierarchical on a mesh runs its channels' ring orders in parallel as flow does") {
  const topo::Topology t = topo::load_topology("mi300x-8");
  const int n = t.gpu_count();
  Request r = all_reduce("hierarchical", n);
  // An all_reduce sends 2 (n-1)/n of the buffer out of every GPU, here over its n-1 xGMI links.
  double out_gbps = 0.0;
  for (int peer = 1; peer < n; ++peer) {
    const auto route = t.route(0, peer);
    REQUIRE(route.size() == 1);  // one direct link per peer
    out_gbps += t.link(route.front()).bandwidth_gbps;
  }
  const double bound_us = 2.0 * (n - 1) / n * kBytes / (out_gbps * 1e3);
  const double analytic_us = predict(t, r).time_us;
  r.fidelity = Fidelity::flow;
  const double flow_us = predict(t, r).time_us;
  INFO("bound " << bound_us << " us, analytic " << analytic_us << ", flow " << flow_us);
  CHECK(analytic_us >= bound_us);
  CHECK(flow_us >= bound_us);
  CHECK(std::abs(flow_us / analytic_us - 1.0) < 0.05);
}

TEST_CASE("direct across nodes is priced with every rank's bytes through its node's NICs") {
  // all_gather of 64 MiB over 4 nodes of 8: a node's 8 ranks send their blocks (1/32 each) to
  // the 24 ranks of other nodes, 8 x 24 / 32 of the buffer over the node's 8 GPU-to-NIC routes,
  // so one of them carries 3/4 of the buffer at least, however the channels spread it. Rotating
  // a rank priced alone over the rails spread its own bytes over 8 NICs: 153.5 us.
  const topo::Topology t = topo::load_topology("h100-cluster-4");
  Request r;
  r.spec.kind = OpKind::all_gather;
  r.spec.nranks = t.gpu_count();
  r.spec.count = kElements / static_cast<std::size_t>(t.gpu_count());
  r.algorithm = "direct";
  const double bound_us = route_us(t, 0, 8, 0.75 * kBytes);
  const double analytic_us = predict(t, r).time_us;
  r.fidelity = Fidelity::flow;
  const double flow_us = predict(t, r).time_us;
  INFO("bound " << bound_us << " us, analytic " << analytic_us << ", flow " << flow_us);
  CHECK(analytic_us >= bound_us);
  CHECK(flow_us >= bound_us);
}
