// compare_all reuses a pair the caller already timed (perf's row, predict()'s answer) instead of
// timing it again (a flow simulation at flow fidelity: perf --compare used to time NCCL's chosen
// pair twice), and a forced algorithm/protocol narrows the pairs it times.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

Request all_reduce(std::size_t bytes, Fidelity fidelity) {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = bytes / 4;
  r.fidelity = fidelity;
  return r;
}

const Prediction* find(const std::vector<Prediction>& rows, const std::string& algorithm,
                       Protocol protocol) {
  for (const Prediction& p : rows) {
    if (p.algorithm == algorithm && p.protocol == protocol) return &p;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("compare_all reuses the pair the caller timed, and times every other one",
          "[compare_all]") {
  const topo::Topology t = topo::load_topology("h100-cluster-2");
  for (Fidelity fidelity : {Fidelity::analytic, Fidelity::flow}) {
    const Request r = all_reduce(std::size_t{4} << 20, fidelity);
    const std::vector<Prediction> fresh = compare_all(t, r);
    Prediction timed = predict(t, r);
    // A time no model gives: seen in the answer only if the pair was reused, not timed again.
    timed.time_us = 123456.0;
    const std::vector<Prediction> reused = compare_all(t, r, &timed);
    REQUIRE(reused.size() == fresh.size());
    const Prediction* mine = find(reused, timed.algorithm, timed.protocol);
    REQUIRE(mine != nullptr);
    CHECK(mine->time_us == 123456.0);
    CHECK(mine->tuner_choice);
    CHECK(reused.back().time_us == 123456.0);  // still sorted, fastest first
    for (const Prediction& p : fresh) {
      if (p.algorithm == timed.algorithm && p.protocol == timed.protocol) continue;
      const Prediction* same = find(reused, p.algorithm, p.protocol);
      REQUIRE(same != nullptr);
      CHECK(same->time_us == p.time_us);
    }
    // A prediction at another fidelity is not this call's: timed again.
    Prediction other = timed;
    other.fidelity = fidelity == Fidelity::flow ? Fidelity::analytic : Fidelity::flow;
    const std::vector<Prediction> not_reused = compare_all(t, r, &other);
    CHECK(find(not_reused, timed.algorithm, timed.protocol)->time_us != 123456.0);
  }
}

TEST_CASE("compare_all with a forced algorithm and protocol times only those, marks NCCL's choice",
          "[compare_all]") {
  const topo::Topology t = topo::load_topology("h100-cluster-2");
  Request r = all_reduce(std::size_t{64} << 20, Fidelity::analytic);
  const Prediction chosen = predict(t, r);
  r.algorithm = chosen.algorithm;
  r.protocol = chosen.protocol;
  const std::vector<Prediction> one = compare_all(t, r);
  REQUIRE(one.size() == 1);
  CHECK(one.front().tuner_choice);
  r.algorithm = "ring";
  r.protocol.reset();
  const std::vector<Prediction> ring = compare_all(t, r);
  CHECK(ring.size() == 3);  // LL, LL128, Simple
  for (const Prediction& p : ring) {
    CHECK(p.algorithm == "ring");
    CHECK(p.tuner_choice == (chosen.algorithm == "ring" && chosen.protocol == p.protocol));
  }
}
