// The replay's caps on what it builds and plays (sim/src/replay_cost.cc), found by fuzz5: a
// 129 KB trace (1024 ranks, one all_to_all) built 8.4M transfers and passed 4 GB within 24 s;
// a 16 KB one (128 ranks, one all_to_all) played 130048 transfers all in flight for minutes; a
// 1.2 MB one (8192 ranks, one 4 MiB all_reduce on h100-cluster-1024) did not end in 5 minutes.
// Each is now refused before SimGrid runs, with a ConfigError naming the call, the count and the
// cap; a call under the caps still replays.
#include <catch2/catch.hpp>
#include <numeric>
#include <string>

#include "replay_traces.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;
using namespace twinccl::sim::testing;
using Catch::Matchers::Contains;

namespace {

Trace one_call(int nranks, OpKind kind, std::size_t count, int comms = 1) {
  TraceBuilder b(nranks);
  const int per_comm = nranks / comms;
  for (int c = 0; c < comms; ++c) {
    std::vector<int> ranks(static_cast<std::size_t>(per_comm));
    std::iota(ranks.begin(), ranks.end(), c * per_comm);
    b.blocking_all(b.comm("c" + std::to_string(c), ranks), kind, count);
  }
  return b.trace();
}

std::string refusal(const Trace& trace, const std::string& preset) {
  try {
    replay(trace, topo::load_topology(preset), {});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(replayed)";
}

}  // namespace

TEST_CASE("replay: a call of one transfer per rank pair over the cap is refused before it is built",
          "[sim][replay][hostile]") {
  const std::string why = refusal(one_call(1024, OpKind::all_to_all, 1024), "h100-cluster-128");
  CHECK_THAT(why, Contains("all_to_all #0 on comm 'c0' (1024 ranks, direct)"));
  CHECK_THAT(why, Contains("would hold over 4194304 transfers (8380416;"));
  CHECK_THAT(why, Contains("replay fewer ranks"));
}

TEST_CASE("replay: a call with too many transfers in flight is refused before it is played",
          "[sim][replay][hostile]") {
  const std::string why = refusal(one_call(128, OpKind::all_to_all, 1024), "h100-cluster-16");
  CHECK_THAT(why, Contains("all_to_all #0 on comm 'c0' (128 ranks, direct) plays 130048 "
                           "transfers with up to 130048 in flight"));
  CHECK_THAT(why, Contains("over the replay's cap of 1073741824"));
}

TEST_CASE("replay: calls of communicators that may overlap count together",
          "[sim][replay][hostile]") {
  // 32 communicators of 32 ranks, one all_to_all each (7936 transfers, all in flight): alone
  // each is 6.3e7 pairs; together 253952 may be in flight with each: 2.0e9, over the cap.
  const std::string many =
      refusal(one_call(1024, OpKind::all_to_all, 1024, 32), "h100-cluster-128");
  CHECK_THAT(many,
             Contains("plays 7936 transfers with up to 253952 in flight (all communicators)"));
  const Trace single = one_call(32, OpKind::all_to_all, 1024);
  const ReplayResult r = replay(single, topo::load_topology("h100-cluster-4"), {});
  CHECK(r.total_us > 0.0);
}
