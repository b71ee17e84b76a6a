// A one-rank world as NCCL runs it (enqueue.cc ncclLaunchOneRank): no collective kernel, a copy
// of the send buffer into the receive buffer through device memory (sim/src/model.h
// device_copy_algbw_gbps), plus the call's host launch. Measured on an H200 with the NCCL backend
// (issue 24): all_reduce 512 MiB, one rank, 258 us; the model said 1496 us (a copy at the GPU's
// NVLink rate) before.
#include <catch2/catch.hpp>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
Request one_rank(OpKind kind, std::size_t bytes, Fidelity fidelity = Fidelity::analytic) {
  Request r;
  r.spec.kind = kind;
  r.spec.nranks = 1;
  r.spec.count = bytes / 4;
  r.gpus_per_thread = 1;
  r.fidelity = fidelity;
  return r;
}
}  // namespace

TEST_CASE("one rank: all_reduce 512 MiB on an H200 is a copy at device-memory speed") {
  const topo::Topology t = topo::load_topology("dgx-h200");
  const Prediction p = predict(t, one_rank(OpKind::all_reduce, 512u << 20));
  // The measured 258 us (H200, NCCL backend, issue 24) is asserted in
  // tests/fidelity/figures/one-gpu.csv; here the mechanism.
  // 2 x 537 MB through 0.9 x 4.8 TB/s, + 5 us launch.
  CHECK(p.time_us == Approx(2.0 * 536870912.0 / (0.9 * 4800e9) * 1e6 + 5.0).epsilon(1e-6));
  // Flow plays no link for one rank: the same copy (it said 0 us before).
  const Prediction flow = predict(t, one_rank(OpKind::all_reduce, 512u << 20, Fidelity::flow));
  CHECK(flow.time_us == Approx(p.time_us));
}

TEST_CASE("one rank: the copy follows the GPU's memory, not its links") {
  const std::size_t bytes = 1u << 30;
  const double h100 =
      predict(topo::load_topology("dgx-h100"), one_rank(OpKind::all_reduce, bytes)).time_us;
  const double h200 =
      predict(topo::load_topology("dgx-h200"), one_rank(OpKind::all_reduce, bytes)).time_us;
  const double a100 =
      predict(topo::load_topology("dgx-a100"), one_rank(OpKind::all_reduce, bytes)).time_us;
  // The same NVLink graph, 3.35 vs 4.8 TB/s of HBM.
  CHECK((h100 - 5.0) / (h200 - 5.0) == Approx(4800.0 / 3350.0).epsilon(1e-6));
  CHECK(a100 > h100);
  // Every collective of one rank moves its bytes once (all_gather's nranks x count = count).
  for (OpKind kind : {OpKind::all_gather, OpKind::reduce_scatter, OpKind::broadcast}) {
    CAPTURE(name(kind));
    CHECK(predict(topo::load_topology("dgx-h200"), one_rank(kind, bytes)).time_us == Approx(h200));
  }
}

TEST_CASE("one rank: a topology file's memory_gbps is the copy's speed and round-trips") {
  const std::string json = R"({"version": 1, "name": "one-gpu", "arch": "hopper",
    "memory_gbps": 1000,
    "vertices": [{"name": "gpu0", "kind": "gpu", "node": 0}, {"name": "cpu0", "kind": "cpu",
      "node": 0}],
    "links": [{"a": "gpu0", "b": "cpu0", "type": "pcie", "bandwidth_gbps": 24}]})";
  const topo::Topology t = topo::topology_from_json(json);
  CHECK(t.summary().memory_gbps == 1000.0);
  const Prediction p = predict(t, one_rank(OpKind::all_reduce, 900u << 20));
  CHECK(p.time_us == Approx(2.0 * (900u << 20) / (0.9 * 1000e9) * 1e6 + 5.0).epsilon(1e-6));
  const topo::Topology back = topo::topology_from_json(topo::to_json(t));
  CHECK(back.facts().memory_gbps == 1000.0);
  CHECK_THROWS_WITH(
      topo::topology_from_json(R"({"version": 1, "memory_gbps": -1, "vertices": [], "links": []})"),
      Catch::Contains("memory_gbps"));
}

TEST_CASE("one rank: labelled as NCCL runs it, nothing in place, a scaling kernel for avg") {
  // enqueue.cc: taskAppend hands a one-rank collective to ncclLaunchOneRank before any algorithm
  // is chosen: cudaMemcpyAsync out of place, nothing in place, a scaling kernel for premul_sum
  // (a float avg becomes premul_sum in hostToDevRedOp; an integer avg's post-division by 1 is
  // nothing). The label said ring/LL before (every pair times the same; the first one won).
  const topo::Topology t = topo::load_topology("dgx-h200");
  const std::size_t bytes = 512u << 20;
  Request r = one_rank(OpKind::all_reduce, bytes);
  const Prediction copy = predict(t, r);
  CHECK(copy.one_rank == "copy");
  CHECK(label(copy) == "one_rank/copy");
  r.in_place = true;
  const Prediction none = predict(t, r);
  CHECK(none.one_rank == "none");
  CHECK(none.time_us == Approx(5.0));  // the host's call alone (host_launch.h)
  r.gpus_per_thread = 0;
  CHECK(predict(t, r).time_us == 0.0);  // the kernels alone: there are none
  r.gpus_per_thread = 1;
  r.op = ReduceKind::avg;  // float avg: premul_sum, a kernel in place too
  const Prediction scale = predict(t, r);
  CHECK(scale.one_rank == "scale");
  CHECK(scale.time_us == Approx(copy.time_us));
  r.dtype = DataType::int32;  // integer avg: sum then divide by 1 rank, nothing in place
  CHECK(predict(t, r).one_rank == "none");
  // all_to_all, gather, scatter take the path too (taskAppend checks nRanks == 1 before it turns
  // them into send/recv): the same copy (they were 5 us, direct/Simple, nothing copied); two ranks
  // run an algorithm.
  for (OpKind kind : {OpKind::all_to_all, OpKind::gather, OpKind::scatter}) {
    CAPTURE(name(kind));
    const Prediction p = predict(t, one_rank(kind, bytes));
    CHECK(label(p) == "one_rank/copy");
    CHECK(p.time_us == Approx(copy.time_us).epsilon(1e-9));
  }
  Request two = one_rank(OpKind::all_reduce, bytes);
  two.spec.nranks = 2;
  const Prediction p2 = predict(t, two);
  CHECK(p2.one_rank.empty());
  CHECK(label(p2) == p2.algorithm + "/" + std::string(name(p2.protocol)));
  // --compare: one row, the copy, not one per algorithm/protocol pair at the same time.
  const std::vector<Prediction> all = compare_all(t, one_rank(OpKind::all_reduce, bytes));
  REQUIRE(all.size() == 1);
  CHECK(all[0].tuner_choice);
  CHECK(label(all[0]) == "one_rank/copy");
}
