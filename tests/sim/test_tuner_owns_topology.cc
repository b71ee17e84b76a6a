// A Tuner keeps its own copy of the topology (copies share the graph): one made from a temporary,
// as `sim::Tuner tuner(topo::load_topology("dgx-h100"), 8);` reads naturally, stays valid. It kept
// a pointer before and such a tuner read freed memory (a segfault in a test written that way).
#include <catch2/catch.hpp>

#include "twinccl/sim/p2p.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;

TEST_CASE("a tuner made from a temporary topology keeps its own copy", "[sim]") {
  const sim::Tuner tuner(topo::load_topology("h100-cluster-2"), 16);
  CHECK(tuner.topology().name() == "h100-cluster-2");
  CHECK(tuner.topology().gpu_count() == 16);
  const topo::Topology same = topo::load_topology("h100-cluster-2");
  const sim::Tuner kept(same, 16);
  // Its own copy, not the caller's object (a tuner that kept a pointer returns `same` itself:
  // this fails on that code whether or not the freed memory above was reused).
  CHECK(&kept.topology() != &same);
  const sim::Choice a = tuner.choose(OpKind::all_reduce, 1 << 20, DataType::float32);
  const sim::Choice b = kept.choose(OpKind::all_reduce, 1 << 20, DataType::float32);
  CHECK(a.algorithm == b.algorithm);
  CHECK(a.time_us == b.time_us);
  const auto pattern = sim::sendrecv_pattern(16, 64 << 20);
  CHECK(sim::predict_p2p(tuner, pattern, sim::Fidelity::flow).time_us ==
        sim::predict_p2p(kept, pattern, sim::Fidelity::flow).time_us);
}
