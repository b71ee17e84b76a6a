// The PyTorch trace importer's conversions: torch's "In/Out msg nelems" to NCCL's count per
// collective (operation.h), split sizes to per-rank counts, dtypes, roots, peers and process
// groups (torch_ops.cc, torch_import.cc).
#include <catch2/catch.hpp>

#include "torch_trace_builder.h"
#include "twinccl/sim/replay_trace.h"
#include "twinccl/trace/torch_import.h"

using twinccl::DataType;
using twinccl::OpKind;
using twinccl_test::TorchRankBuilder;
namespace trace = twinccl::trace;

namespace {

// Every rank of a `world` issues the same call; returns rank 0's op.
trace::TraceOp one_call(int world, const std::string& name, const std::string& dtype, long long in,
                        long long out, const nlohmann::json& extra = nlohmann::json::object()) {
  std::vector<TorchRankBuilder> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.emplace_back(r, world);
    ranks.back().call(name, dtype, in, out, extra);
  }
  const trace::Trace t = trace::import_torch_traces(twinccl_test::texts(ranks)).trace;
  twinccl::sim::check_trace(t, "imported");
  REQUIRE(t.ranks[0].ops.size() == 1);
  return t.ranks[0].ops[0];
}

}  // namespace

TEST_CASE("torch import: counts follow NCCL for each collective") {
  const int n = GENERATE(1, 2, 3, 4);
  const long long c = GENERATE(0LL, 1LL, 4097LL);
  INFO("group of " << n << ", count " << c);
  auto check = [&](const char* torch, OpKind kind, long long in, long long out) {
    const trace::TraceOp op = one_call(n, torch, "Float", in, out);
    CHECK(op.kind == kind);
    CHECK(op.count == static_cast<std::size_t>(c));
  };
  check("allreduce", OpKind::all_reduce, c, c);
  check("allreduce_coalesced", OpKind::all_reduce, c, c);
  check("_allgather_base", OpKind::all_gather, c, n * c);
  check("all_gather", OpKind::all_gather, c, n * c);
  check("allgather_into_tensor_coalesced", OpKind::all_gather, c, n * c);
  check("_reduce_scatter_base", OpKind::reduce_scatter, n * c, c);
  check("reduce_scatter", OpKind::reduce_scatter, n * c, c);
  check("reduce_scatter_tensor_coalesced", OpKind::reduce_scatter, n * c, c);
  check("all_to_all", OpKind::all_to_all, n * c, n * c);
  check("gather", OpKind::gather, c, n * c);
  check("scatter", OpKind::scatter, n * c, c);
  check("broadcast", OpKind::broadcast, c, c);
  check("reduce", OpKind::reduce, c, c);
}

TEST_CASE("torch import: all_to_allv's split sizes (rows) become per-rank element counts") {
  // 2 ranks; rank 0 sends 1 row to rank 0 and 3 rows to rank 1, a row of 2 elements; rank 1
  // sends 2 and 2 rows.
  std::vector<TorchRankBuilder> ranks = {TorchRankBuilder(0, 2), TorchRankBuilder(1, 2)};
  ranks[0].call("all_to_allv", "BFloat16", 8, 6,
                {{"In split size", "[1, 3]"}, {"Out split size", "[1, 2]"}});
  ranks[1].call("all_to_allv", "BFloat16", 8, 10,
                {{"In split size", "[2, 2]"}, {"Out split size", "[3, 2]"}});
  const trace::Trace t = trace::import_torch_traces(twinccl_test::texts(ranks)).trace;
  twinccl::sim::check_trace(t, "imported");
  CHECK(t.ranks[0].ops[0].kind == OpKind::all_to_all_v);
  CHECK(t.ranks[0].ops[0].counts == std::vector<std::size_t>{2, 6});
  CHECK(t.ranks[1].ops[0].counts == std::vector<std::size_t>{4, 4});
  CHECK(t.ranks[0].ops[0].dtype == DataType::bfloat16);
}

TEST_CASE("torch import: torch's dtype names") {
  const std::vector<std::pair<std::string, DataType>> names = {
      {"Byte", DataType::uint8},
      {"Char", DataType::int8},
      {"Int", DataType::int32},
      {"Long", DataType::int64},
      {"Half", DataType::float16},
      {"BFloat16", DataType::bfloat16},
      {"Float", DataType::float32},
      {"Double", DataType::float64},
      {"Bool", DataType::uint8},
      {"Float8_e4m3fn", DataType::float8_e4m3},
      {"Float8_e5m2", DataType::float8_e5m2}};
  for (const auto& [torch, ours] : names) {
    INFO(torch);
    CHECK(one_call(2, "allreduce", torch, 16, 16).dtype == ours);
  }
}

TEST_CASE("torch import: roots and send/recv peers") {
  CHECK(one_call(3, "broadcast", "Float", 8, 8, {{"Rank", 2}}).root == 2);
  std::vector<TorchRankBuilder> ranks = {TorchRankBuilder(0, 3), TorchRankBuilder(1, 3),
                                         TorchRankBuilder(2, 3)};
  // Rank 0 sends to world rank 2; "Rank" is the peer's group rank, "Dst Rank" its world rank.
  ranks[0].call("send", "Float", 64, 64, {{"Rank", 2}, {"Dst Rank", 2}});
  ranks[2].call("recv", "Float", 64, 64, {{"Rank", 0}, {"Src Rank", 0}});
  // Older spelling: only "Rank".
  ranks[1].call("send", "Float", 32, 32, {{"Rank", 0}});
  ranks[0].call("recv", "Float", 32, 32, {{"Rank", 1}});
  const trace::Trace t = trace::import_torch_traces(twinccl_test::texts(ranks)).trace;
  twinccl::sim::check_trace(t, "imported");
  CHECK(t.p2p_per_peer_streams);
  CHECK(t.ranks[0].ops[0].kind == OpKind::send);
  CHECK(t.ranks[0].ops[0].peer == 2);
  CHECK(t.ranks[2].ops[0].peer == 0);
  CHECK(t.ranks[1].ops[0].peer == 0);
  CHECK(t.ranks[0].ops[1].kind == OpKind::recv);
  CHECK(t.ranks[0].ops[1].peer == 1);
}

TEST_CASE("torch import: process groups become communicators of their world ranks") {
  // 4 ranks: the world, and two groups [0, 2] and [1, 3]; the profiler cut a long ranks list
  // short, which is read as the world when the group is the whole world.
  std::vector<TorchRankBuilder> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.emplace_back(r, 4);
    ranks.back().call("allreduce", "Float", 16, 16, {{"Process Group Ranks", "[0, 1, ..., 3]"}});
    const std::string group = r % 2 == 0 ? "[0, 2]" : "[1, 3]";
    ranks.back().call(
        "_allgather_base", "Half", 5, 10,
        {{"Process Group Name", r % 2 == 0 ? "1" : "2"}, {"Process Group Description", "dp"}},
        group);
  }
  const trace::Trace t = trace::import_torch_traces(twinccl_test::texts(ranks)).trace;
  twinccl::sim::check_trace(t, "imported");
  REQUIRE(t.communicators.size() == 3);
  CHECK(t.communicators[0].ranks == std::vector<int>{0, 1, 2, 3});
  CHECK(t.communicators[1].ranks == std::vector<int>{0, 2});
  CHECK(t.communicators[1].name == "dp");
  CHECK(t.communicators[2].ranks == std::vector<int>{1, 3});
  CHECK(t.ranks[3].ops[1].comm == 2);
  CHECK(t.ranks[3].ops[1].seq == 0);  // the group's first collective
  CHECK(t.ranks[3].ops[1].count == 5);
}

TEST_CASE("torch import: compute between two collectives is the compute stream's busy time") {
  std::vector<TorchRankBuilder> ranks = {TorchRankBuilder(0, 2), TorchRankBuilder(1, 2)};
  for (TorchRankBuilder& r : ranks) {
    r.compute(300);  // 300 us before the first call
    r.call("allreduce", "Float", 1024, 1024);
    r.compute(40);
    r.compute(60);
    r.call("allreduce", "Float", 1024, 1024);
  }
  const trace::Trace t = trace::import_torch_traces(twinccl_test::texts(ranks)).trace;
  double total_s = 0;
  for (const trace::TraceEvent& e : t.ranks[1].events) total_s += e.seconds;
  CHECK(total_s == Approx(400e-6).epsilon(1e-9));
  CHECK(t.ranks[1].events.front().kind == trace::TraceEventKind::compute);
  CHECK(t.ranks[1].events.front().seconds == Approx(300e-6).epsilon(1e-9));
}

TEST_CASE("torch import: an NCCL kernel on the compute stream is not async") {
  std::vector<TorchRankBuilder> ranks = {TorchRankBuilder(0, 2), TorchRankBuilder(1, 2)};
  for (TorchRankBuilder& r : ranks) {
    r.compute(100);
    r.call("allreduce", "Float", 1024, 1024);  // stream 20: a stream of its own
    r.set_comm_stream(7);
    r.call("allreduce", "Float", 1024, 1024);  // stream 7, beside the compute kernels
    r.compute(50);
  }
  const trace::Trace t = trace::import_torch_traces(twinccl_test::texts(ranks)).trace;
  CHECK(t.ranks[0].ops[0].async);
  CHECK_FALSE(t.ranks[0].ops[1].async);
  double total_s = 0;
  for (const trace::TraceEvent& e : t.ranks[0].events) total_s += e.seconds;
  CHECK(total_s == Approx(150e-6).epsilon(1e-9));  // NCCL's 10 us kernels are not compute
}
