// Routes: hop counts, bottleneck bandwidth and latency for intra-node, cross-node (leaf and
// spine) and torus paths; determinism; the documented ECMP spine choice; a 1024-node cluster.
#include <catch2/catch.hpp>
#include <chrono>
#include <set>
#include <thread>

#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl::topo;

namespace {

std::vector<std::string> names(const Topology& t, int a, int b) {
  std::vector<std::string> out;
  for (VertexId v : t.route_vertices(a, b)) out.push_back(t.vertex(v).name);
  return out;
}

// A route is a walk: consecutive links share a vertex, starting at GPU a and ending at GPU b.
void check_walk(const Topology& t, int a, int b) {
  const std::vector<LinkId> r = t.route(a, b);
  VertexId at = t.gpu(a);
  for (LinkId l : r) at = t.other_end(l, at);  // throws if the link does not touch `at`
  CHECK(at == t.gpu(b));
}

}  // namespace

TEST_CASE("route to self is empty", "[topologies][routing]") {
  const Topology t = dgx_h100();
  CHECK(t.route(3, 3).empty());
  CHECK(measure(t, t.route(3, 3)).hops == 0);
  CHECK(measure(t, t.route(3, 3)).bottleneck_bandwidth_gbps == 0.0);
}

TEST_CASE("intra-node routes cross the NVSwitch", "[topologies][routing]") {
  const Topology t = dgx_h100();
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      const RouteMetrics m = measure(t, t.route(a, b));
      CHECK(m.hops == 2);
      CHECK(m.bottleneck_bandwidth_gbps == Approx(370.8));
      CHECK(m.latency_us == Approx(0.4));
      check_walk(t, a, b);
    }
  }
  CHECK(names(t, 0, 5) == std::vector<std::string>{"gpu0", "nvswitch", "gpu5"});
  const RouteMetrics a100 = measure(dgx_a100(), dgx_a100().route(1, 6));
  CHECK(a100.hops == 2);
  CHECK(a100.bottleneck_bandwidth_gbps == Approx(240.0));  // 12 x NCCL's SM80 20 GB/s
}

TEST_CASE("pcie-4gpu routes through the PCIe switch", "[topologies][routing]") {
  const Topology t = pcie_4gpu();
  CHECK(names(t, 0, 3) == std::vector<std::string>{"gpu0", "pcie0", "gpu3"});
  const RouteMetrics m = measure(t, t.route(2, 1));
  CHECK(m.hops == 2);
  CHECK(m.bottleneck_bandwidth_gbps == Approx(24.0));
  CHECK(m.latency_us == Approx(0.5));
}

TEST_CASE("cross-node routes: same rail through the leaf, other rail through a spine",
          "[topologies][routing]") {
  const Topology t = h100_cluster(4);
  CHECK(names(t, 0, 8) == std::vector<std::string>{"n0.gpu0", "n0.pcie0", "n0.nic0", "leaf.su0.r0",
                                                   "n1.nic0", "n1.pcie0", "n1.gpu0"});
  const RouteMetrics same_rail = measure(t, t.route(0, 8));
  CHECK(same_rail.hops == 6);
  CHECK(same_rail.bottleneck_bandwidth_gbps == Approx(48.0));  // PCIe gen5 x16 to the NIC
  CHECK(same_rail.latency_us == Approx(3.0));
  // rank 9 = n1.gpu1 on rail 1: spine (node 1 mod 32) = spine1.
  CHECK(names(t, 0, 9) == std::vector<std::string>{"n0.gpu0", "n0.pcie0", "n0.nic0", "leaf.su0.r0",
                                                   "spine1", "leaf.su0.r1", "n1.nic1", "n1.pcie0",
                                                   "n1.gpu1"});
  const RouteMetrics cross_rail = measure(t, t.route(0, 9));
  CHECK(cross_rail.hops == 8);
  CHECK(cross_rail.latency_us == Approx(5.0));
  CHECK(t.home_nic(13).has_value());
  CHECK(t.vertex(*t.home_nic(13)).name == "n1.nic5");
}

TEST_CASE("cross-unit routes go leaf -> spine -> leaf with the spine picked by destination",
          "[topologies][routing]") {
  const Topology t = h100_cluster(64);
  const int dst = 32 * 8 + 1;  // n32.gpu1 on rail 1 of unit 1: spine (32 mod 32)
  const std::vector<std::string> r = names(t, 1, dst);
  CHECK(r == std::vector<std::string>{"n0.gpu1", "n0.pcie0", "n0.nic1", "leaf.su0.r1", "spine0",
                                      "leaf.su1.r1", "n32.nic1", "n32.pcie0", "n32.gpu1"});
  // ECMP by destination: different destinations of one source spread over the spines.
  std::set<std::string> spines;
  for (int node = 32; node < 64; ++node) spines.insert(names(t, 0, node * 8 + 2)[4]);
  CHECK(spines.size() == 32);
  // Repeatable: the same question gets the same answer.
  CHECK(t.route(5, 300) == t.route(5, 300));
  CHECK(h100_cluster(64).route(5, 300) == t.route(5, 300));
}

TEST_CASE("routes are walks between the right GPUs for every pair", "[topologies][routing]") {
  const std::string name =
      GENERATE(as<std::string>{}, "dgx-a100", "h100x3", "torus-3x5", "pcie-4gpu");
  const Topology topo = load_topology(name);
  for (int a = 0; a < topo.gpu_count(); ++a) {
    for (int b = 0; b < topo.gpu_count(); ++b) check_walk(topo, a, b);
  }
}

TEST_CASE("torus routes take the wrap-around when shorter", "[topologies][routing]") {
  const Topology t = torus_2d(4, 4, 100.0);
  // rank = row * 4 + col
  CHECK(measure(t, t.route(0, 3)).hops == 1);   // (0,0) -> (0,3) wraps
  CHECK(measure(t, t.route(0, 12)).hops == 1);  // (0,0) -> (3,0) wraps
  CHECK(measure(t, t.route(0, 10)).hops == 4);  // (0,0) -> (2,2)
  CHECK(measure(t, t.route(5, 15)).hops == 4);  // (1,1) -> (3,3)
  CHECK(measure(t, t.route(0, 15)).hops == 2);  // (0,0) -> (3,3) both wrap
  CHECK(measure(t, t.route(0, 15)).bottleneck_bandwidth_gbps == Approx(100.0));
  CHECK(measure(t, t.route(0, 15)).latency_us == Approx(1.0));
  const Topology ring = torus_2d(1, 7);
  CHECK(measure(ring, ring.route(0, 6)).hops == 1);
  CHECK(measure(ring, ring.route(0, 3)).hops == 3);
  CHECK(measure(ring, ring.route(0, 4)).hops == 3);
}

TEST_CASE("routes from many threads at once agree with routes from one", "[topologies][routing]") {
  const Topology t = h100_cluster(8);
  std::vector<std::vector<LinkId>> expected;
  for (int r = 0; r < t.gpu_count(); ++r)
    expected.push_back(t.route(r, (r * 37 + 11) % t.gpu_count()));
  const Topology fresh = h100_cluster(8);  // empty route caches, filled concurrently below
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&, w] {
      for (int r = 0; r < fresh.gpu_count(); ++r) {
        const int a = (r + w * 17) % fresh.gpu_count();
        if (fresh.route(a, (a * 37 + 11) % fresh.gpu_count()) !=
            expected[static_cast<std::size_t>(a)]) {
          ++mismatches[static_cast<std::size_t>(w)];
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  CHECK(mismatches == std::vector<int>(4, 0));
}

TEST_CASE("route rejects ranks out of range", "[topologies][routing]") {
  const Topology t = dgx_h100();
  CHECK_THROWS_AS(t.route(0, 8), twinccl::InvalidArgument);
  CHECK_THROWS_AS(t.route(-1, 0), twinccl::InvalidArgument);
}

TEST_CASE("1024-node cluster routes all ring neighbours correctly",
          "[topologies][routing][large]") {
  const auto start = std::chrono::steady_clock::now();
  const Topology t = h100_cluster(1024);
  const auto built = std::chrono::steady_clock::now();
  REQUIRE(t.gpu_count() == 8192);
  int intra = 0, cross = 0;
  for (int r = 0; r < t.gpu_count(); ++r) {
    const int next = (r + 1) % t.gpu_count();
    const RouteMetrics m = measure(t, t.route(r, next));
    if (r / 8 == next / 8) {
      ++intra;
      CHECK(m.hops == 2);
      CHECK(m.bottleneck_bandwidth_gbps == Approx(370.8));
    } else {
      ++cross;  // gpu7 of node n -> gpu0 of node n+1: rail 7 -> spine -> rail 0
      CHECK(m.hops == 8);
      CHECK(m.bottleneck_bandwidth_gbps == Approx(48.0));
    }
  }
  const auto routed = std::chrono::steady_clock::now();
  CHECK(intra == 7 * 1024);
  CHECK(cross == 1024);
  // Same rail across units: n0.gpu3 -> n1023.gpu3.
  const RouteMetrics far = measure(t, t.route(3, 1023 * 8 + 3));
  CHECK(far.hops == 8);
  using ms = std::chrono::duration<double, std::milli>;
  INFO("h100-cluster-1024: built in " << ms(built - start).count() << " ms, 8192 ring routes in "
                                      << ms(routed - built).count() << " ms");
}
