// Every SimGrid simulation has a deadline (TWINCCL_SIM_TIMEOUT_S, child_process.cc): a flow program
// too large to play in reasonable time comes back as a TimeoutError naming its size and what to
// do, and a bad setting is a ConfigError. Before, an all_to_all over 128 ranks in the flow model
// (one round of 16256 flows sharing links, 123328 transfers) ran for tens of minutes.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;
using Catch::Matchers::Contains;

namespace {
struct ScopedEnv {
  explicit ScopedEnv(const char* value) { ::setenv("TWINCCL_SIM_TIMEOUT_S", value, 1); }
  ~ScopedEnv() { ::unsetenv("TWINCCL_SIM_TIMEOUT_S"); }
};

// every_flow: SimGrid plays every flow (the reference); by default a one-round program such as a
// direct all_to_all is played by classes of equal flows without SimGrid (flow_fluid.cc).
Request all_to_all(std::size_t bytes, int ranks, bool every_flow = false) {
  Request r;
  r.spec.kind = OpKind::all_to_all;
  r.spec.count = bytes / 4 / static_cast<std::size_t>(ranks);
  r.fidelity = Fidelity::flow;
  r.aggregate_symmetric_flows = !every_flow;
  return r;
}
}  // namespace

TEST_CASE("a flow simulation past TWINCCL_SIM_TIMEOUT_S is stopped with a TimeoutError") {
  const topo::Topology t = topo::load_topology("h100-cluster-16");
  const ScopedEnv env("0.5");
  try {
    (void)predict(t, all_to_all(4 << 20, t.gpu_count(), true));
    FAIL("no TimeoutError");
  } catch (const TimeoutError& e) {
    CHECK_THAT(e.what(), Contains("did not finish within 0.5 s (TWINCCL_SIM_TIMEOUT_S)") &&
                             Contains("128 ranks") && Contains("--fidelity analytic"));
  }
}

TEST_CASE("TWINCCL_SIM_TIMEOUT_S takes positive seconds") {
  const topo::Topology t = topo::load_topology("h100-cluster-2");
  // " 5", "1e2" and "+5" were accepted (strtod's reading) though the README says plain decimal.
  for (const char* bad : {"abc", "0", "-1", "nan", "1e9", "5s", " 5", "1e2", "+5", "0x10", "5 "}) {
    const ScopedEnv env(bad);
    INFO("TWINCCL_SIM_TIMEOUT_S=" << bad);
    CHECK_THROWS_AS(predict(t, all_to_all(1 << 20, t.gpu_count(), true)), ConfigError);
    CHECK_THROWS_WITH(predict(t, all_to_all(1 << 20, t.gpu_count(), true)),
                      Contains("TWINCCL_SIM_TIMEOUT_S='" + std::string(bad) + "'"));
  }
  const ScopedEnv env("60");
  CHECK(predict(t, all_to_all(1 << 20, t.gpu_count(), true)).time_us > 0.0);
}

TEST_CASE("a one-step flow program (direct all_to_all) played as one round keeps its time") {
  // Played as one round since the dependency playback took ~49 s on 64 ranks (4032 flows at once;
  // ~5 s as a round). The time pinned is what the dependency playback gave on 32 ranks (87.94 us
  // for 4 MiB, `twinccl perf alltoall --fidelity flow` before the change); speed is bench work.
  const topo::Topology t = topo::load_topology("h100-cluster-4");
  const Prediction p = predict(t, all_to_all(4 << 20, t.gpu_count()));
  CHECK(p.algorithm == "direct");
  CHECK(p.time_us == Approx(87.94).epsilon(0.001));
}
