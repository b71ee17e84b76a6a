// Ring orders on switchless GPU meshes and tori (sim/src/ring_orders.cc): every order is a ring
// over direct links, and together they use every GPU-GPU link direction exactly once; across
// nodes a fully linked node is crossed on distinct links; switched nodes keep their rotations.
#include <catch2/catch.hpp>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "../../sim/src/flow_build.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim::detail;

namespace {

std::vector<int> all_ranks(const topo::Topology& t) {
  std::vector<int> r(static_cast<std::size_t>(t.gpu_count()));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

// Directed GPU-GPU link directions (rank pairs) of the topology between `ranks`.
std::set<std::pair<int, int>> arcs_between(const topo::Topology& t, const std::vector<int>& ranks) {
  std::map<topo::VertexId, int> rank_of;
  for (int r : ranks) rank_of[t.gpu(r)] = r;
  std::set<std::pair<int, int>> arcs;
  for (int a : ranks) {
    for (topo::LinkId l : t.links_of(t.gpu(a))) {
      const auto it = rank_of.find(t.other_end(l, t.gpu(a)));
      if (it != rank_of.end() && it->second != a) arcs.insert({a, it->second});
    }
  }
  return arcs;
}

// Every order is a permutation of `ranks`, every hop (wrap included) one link, no arc twice;
// returns the arcs used.
std::set<std::pair<int, int>> check_cycles(const topo::Topology& t, const ChannelRanks& orders,
                                           const std::vector<int>& ranks) {
  std::set<std::pair<int, int>> used;
  const std::set<int> want(ranks.begin(), ranks.end());
  for (const auto& order : orders.perms) {
    CHECK(std::set<int>(order.begin(), order.end()) == want);
    REQUIRE(order.size() == ranks.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      const int a = order[i], b = order[(i + 1) % order.size()];
      CHECK(t.route(a, b).size() == 1);
      CHECK(used.insert({a, b}).second);
    }
  }
  return used;
}

}  // namespace

TEST_CASE("ring orders: a mesh or torus gets one ring per link, every link direction once") {
  const std::string preset =
      GENERATE(as<std::string>{}, "mi300x-8", "torus-4x4", "torus-3x5", "torus-3x4", "torus-8x8",
               "torus-16x16", "torus-6x4", "torus-4x5", "torus-5x7");
  const topo::Topology t = topo::load_topology(preset);
  const std::vector<int> ranks = all_ranks(t);
  const ChannelRanks orders = mesh_ranks(t, ranks);
  INFO(preset << ": " << orders.perms.size() << " ring orders");
  CHECK(orders.direct_links);
  CHECK(orders.perms.size() == (preset == "mi300x-8" ? 7u : 4u));
  CHECK(check_cycles(t, orders, ranks) == arcs_between(t, ranks));
}

TEST_CASE("ring orders: part of the mesh, and graphs without such rings") {
  const topo::Topology mesh = topo::load_topology("mi300x-8");
  SECTION("5 of the 8 GPUs: K5 has 4 link-disjoint rings") {
    const std::vector<int> five = {0, 2, 3, 5, 7};
    const ChannelRanks orders = mesh_ranks(mesh, five);
    CHECK(orders.perms.size() == 4);
    CHECK(check_cycles(mesh, orders, five) == arcs_between(mesh, five));
  }
  SECTION("4 or 6 fully linked GPUs have none (Tillson): one ring order, as before") {
    CHECK(mesh_ranks(mesh, std::vector<int>{0, 1, 2, 3}).perms.empty());
    CHECK(mesh_ranks(mesh, std::vector<int>{0, 1, 2, 3, 4, 5}).perms.empty());
  }
  SECTION("switched nodes, a plain cycle, two GPUs: none") {
    for (const char* preset : {"dgx-h100", "pcie-4gpu", "torus-1x8", "torus-2x2"}) {
      const topo::Topology t = topo::load_topology(preset);
      INFO(preset);
      CHECK(mesh_ranks(t, all_ranks(t)).perms.empty());
    }
    CHECK(mesh_ranks(mesh, std::vector<int>{3, 6}).perms.empty());
  }
}

TEST_CASE("ring orders across nodes: a fully linked node is crossed on distinct links") {
  const topo::Topology t = topo::load_topology("mi300x-cluster-2");
  const std::vector<int> ranks = all_ranks(t);
  const ChannelRanks rails = rail_ranks(t, ranks);
  REQUIRE(rails.perms.size() == 8);
  CHECK(rails.direct_links);
  std::set<std::pair<int, int>> intra;
  std::map<int, int> entries, exits;  // node 0's entry and exit GPU -> channels
  for (std::size_t c = 0; c < rails.perms.size(); ++c) {
    const auto& order = rails.perms[c];
    CHECK(std::set<int>(order.begin(), order.end()).size() == ranks.size());
    CHECK(order[0] == static_cast<int>(c));  // enters node 0 at its GPU c (rail c)
    entries[order[0]] += 1;
    exits[order[7]] += 1;
    CHECK(order[7] == static_cast<int>((c + 4) % 8));
    for (std::size_t j = 0; j + 1 < order.size(); ++j) {
      const int a = order[j], b = order[j + 1];
      if (t.vertex(t.gpu(a)).node != t.vertex(t.gpu(b)).node) continue;
      CHECK(t.route(a, b).size() == 1);
      CHECK(intra.insert({a, b}).second);  // no xGMI link direction used by two channels
    }
  }
  CHECK(intra.size() == 2 * 56);  // both nodes' 56 link directions, each once
  CHECK(entries.size() == 8);
  CHECK(exits.size() == 8);
}

TEST_CASE("ring orders across switched nodes stay rotations") {
  const topo::Topology t = topo::load_topology("h100-cluster-2");
  const ChannelRanks rails = rail_ranks(t, all_ranks(t));
  REQUIRE(rails.perms.size() == 8);
  CHECK_FALSE(rails.direct_links);
  for (std::size_t c = 0; c < 8; ++c) {
    for (int r = 0; r < 16; ++r) {
      CHECK(rails.perms[c][static_cast<std::size_t>(r)] ==
            (r / 8) * 8 + static_cast<int>((static_cast<std::size_t>(r % 8) + c) % 8));
    }
  }
}
