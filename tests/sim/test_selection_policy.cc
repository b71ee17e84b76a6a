// The one selection policy (sim/selection.h) and the algorithms' traits table behind it.
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../../sim/src/algorithm_traits.h"
#include "support/edited_topology.h"
#include "twinccl/errors.h"
#include "twinccl/sim/selection.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;

namespace {

std::vector<int> first(int n) {
  std::vector<int> r;
  for (int i = 0; i < n; ++i) r.push_back(i);
  return r;
}

sim::Forced forced(std::string algorithm, std::optional<sim::Protocol> protocol = {}) {
  sim::Forced f;
  f.algorithm = std::move(algorithm);
  f.protocol = protocol;
  return f;
}

OpDesc call(OpKind kind, std::size_t count) {
  OpDesc op;
  op.kind = kind;
  op.count = count;
  return op;
}

}  // namespace

TEST_CASE("selection: every registry algorithm has a traits row, nvls_tree is simulator-only") {
  for (const std::string& name : algorithm_names()) {
    INFO(name);
    const sim::detail::AlgorithmTraits* t = sim::detail::find_traits(name);
    REQUIRE(t != nullptr);
    CHECK_FALSE(t->simulator_only);
    CHECK(t->schedule == name);
  }
  const auto& nvls_tree = sim::detail::traits_of("nvls_tree");
  CHECK(nvls_tree.simulator_only);
  CHECK(nvls_tree.schedule == "hierarchical");
  CHECK(sim::nccl_algorithm_name("nvls_tree") == "NVLSTree");
  CHECK(sim::nccl_algorithm_name("bruck").empty());
  CHECK_THROWS_AS(sim::detail::traits_of("rign"), InvalidArgument);
}

TEST_CASE("selection: the fallbacks without a tuner, and the tuner's choice with one") {
  const sim::SelectionPolicy none;
  CHECK(none.resolve(call(OpKind::all_reduce, 1 << 20), first(8)).schedule == "ring");
  CHECK(none.resolve(call(OpKind::all_to_all, 1 << 20), first(8)).schedule == "direct");
  CHECK_FALSE(none.resolve(call(OpKind::all_reduce, 1 << 20), first(8)).tuned);

  auto dgx = std::make_shared<const topo::Topology>(topo::dgx_h100());
  const sim::SelectionPolicy policy(dgx);
  const sim::Decision big = policy.resolve(call(OpKind::all_reduce, 1 << 26), first(8));
  CHECK(big.tuned);
  CHECK(big.algorithm == "nvls");
  CHECK(big.protocol == sim::Protocol::simple);
  // More ranks than GPUs, send/recv, barrier and an uneven call without every rank's counts: the
  // registry's default, untuned.
  CHECK_FALSE(policy.resolve(call(OpKind::all_reduce, 1 << 26), first(9)).tuned);
  CHECK(policy.resolve(call(OpKind::all_gather_v, 64), first(8)).schedule == "ring");
  CHECK(policy.resolve(call(OpKind::barrier, 0), first(8)).schedule == "direct");
  // The same Tuner for the same communicator, built once.
  CHECK(&policy.tuner(first(8)) == &policy.tuner(8));
}

TEST_CASE("selection: nvls_tree on two nodes runs hierarchical, forced names and their scope") {
  auto two = std::make_shared<const topo::Topology>(
      twinccl_test::with_settings(topo::dgx_h100(), {"nodes=2"}));
  const sim::SelectionPolicy policy(two);
  const sim::Decision d = policy.resolve(call(OpKind::all_reduce, 1 << 26), first(16));
  CHECK(d.algorithm == "nvls_tree");
  CHECK(d.schedule == "hierarchical");
  // Forced for every call: a name that does not exist for the collective is an error...
  CHECK_THROWS_AS(policy.resolve(call(OpKind::all_gather, 1 << 20), first(16), forced("tree")),
                  InvalidArgument);
  // ...where it applies only: ignored there, kept where it exists.
  sim::Forced where{"tree", {}, sim::ForcedScope::where_it_applies, ""};
  CHECK(policy.resolve(call(OpKind::all_gather, 1 << 20), first(16), where).algorithm != "tree");
  CHECK(policy.resolve(call(OpKind::all_reduce, 1 << 20), first(16), where).algorithm == "tree");
  // A forced protocol where the algorithm runs it; LL on nvls_tree is an error for every call.
  CHECK_THROWS_AS(policy.resolve(call(OpKind::all_reduce, 1 << 26), first(16),
                                 forced("nvls_tree", sim::Protocol::ll)),
                  InvalidArgument);
  CHECK_THROWS_AS(policy.resolve(call(OpKind::all_reduce, 1 << 20), first(16), forced("rign")),
                  InvalidArgument);
}
