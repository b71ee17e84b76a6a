// The PyTorch trace importer's replicate_missing_ranks (--replicate-missing-ranks): one rank's
// profile as every rank of an SPMD job. The valid cases equal importing every rank's file, built
// here as the same program with the rank changed; the refused ones name what cannot be told.
#include <catch2/catch.hpp>

#include "torch_trace_builder.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay_trace.h"
#include "twinccl/trace/torch_import.h"

using Catch::Matchers::Contains;
using twinccl_test::TorchRankBuilder;
namespace trace = twinccl::trace;

namespace {

std::string list(int first, int n, int stride) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(first + i * stride);
  return s + "]";
}

// Rank `rank` of a world of 8 laid out as tensor parallel 2 x data parallel 4 (Megatron's
// layout): a world all_reduce, an all_gather on the rank's tp pair, an all_reduce on its dp
// group, a broadcast from the tp group's rank 1, with compute between. The groups' names differ
// per rank as torch.distributed numbers them; their descriptions do not.
TorchRankBuilder tp_dp_rank(int rank) {
  TorchRankBuilder b(rank, 8);
  const int tp_first = rank / 2 * 2, dp_first = rank % 2;
  const nlohmann::json tp = {{"Process Group Name", std::to_string(1 + rank / 2)},
                             {"Process Group Description", "tp"}};
  const nlohmann::json dp = {{"Process Group Name", std::to_string(5 + rank % 2)},
                             {"Process Group Description", "dp"}};
  for (int step = 0; step < 2; ++step) {
    b.compute(40);
    b.call("allreduce", "BFloat16", 4096, 4096);
    b.compute(25);
    b.call("_allgather_base", "BFloat16", 512, 1024, tp, list(tp_first, 2, 1));
    b.call("wait", "", 0, 0, nlohmann::json::object(), "", false);
    nlohmann::json root = tp;
    root["Rank"] = 1;
    b.call("broadcast", "Long", 8, 8, root, list(tp_first, 2, 1));
    b.compute(10);
    b.call("allreduce", "Float", 2048, 2048, dp, list(dp_first, 4, 2));
  }
  return b;
}

trace::TorchImportOptions replicate() {
  trace::TorchImportOptions o;
  o.replicate_missing_ranks = true;
  return o;
}

trace::TorchImport replicated(const std::vector<TorchRankBuilder>& given) {
  return trace::import_torch_traces(twinccl_test::texts(given), replicate());
}

std::string refusal(const std::vector<trace::TorchTraceText>& files) {
  try {
    trace::import_torch_traces(files, replicate());
  } catch (const twinccl::ConfigError& e) {
    return e.what();
  }
  return "no ConfigError";
}

}  // namespace

TEST_CASE("torch replicate: one rank of a world-only job equals every rank's file") {
  const int world = GENERATE(2, 3, 8);
  std::vector<TorchRankBuilder> all;
  for (int r = 0; r < world; ++r) {
    TorchRankBuilder b(r, world);
    b.compute(30);
    b.call("allreduce", "Float", 1000, 1000);
    b.call("broadcast", "Long", 4, 4, {{"Rank", world - 1}});
    b.compute(12);
    b.call("reduce_scatter_tensor_coalesced", "Half", 64 * world, 64);
    all.push_back(b);
  }
  const trace::TorchImport every = trace::import_torch_traces(twinccl_test::texts(all));
  const trace::TorchImport one = replicated({all[0]});
  CHECK(one.replicated_from == 0);
  REQUIRE(one.replicated.size() == static_cast<std::size_t>(world - 1));
  CHECK(one.replicated.back() == world - 1);
  CHECK_THAT(one.trace.program, Contains("replicated from rank 0's profile"));
  trace::Trace got = one.trace;
  got.program = every.trace.program;
  CHECK(got == every.trace);
  for (const trace::RankTrace& r : one.trace.ranks) CHECK(r.ops[1].root == world - 1);
  twinccl::sim::check_trace(one.trace, "replicated");
}

TEST_CASE("torch replicate: tp and dp groups get each rank's counterparts") {
  std::vector<TorchRankBuilder> all;
  for (int r = 0; r < 8; ++r) all.push_back(tp_dp_rank(r));
  const int from = GENERATE(0, 5);
  // The reference imports the profiled rank first, then the others in order, as replication
  // adds them (the communicators are numbered in the order they are met).
  std::vector<TorchRankBuilder> ordered = {all[static_cast<std::size_t>(from)]};
  for (int r = 0; r < 8; ++r)
    if (r != from) ordered.push_back(all[static_cast<std::size_t>(r)]);
  const trace::TorchImport every = trace::import_torch_traces(twinccl_test::texts(ordered));
  const trace::TorchImport one = replicated({all[static_cast<std::size_t>(from)]});
  INFO("from rank " << from);
  CHECK(one.replicated_from == from);
  CHECK(one.replicated.size() == 7);
  CHECK(one.trace.communicators.size() == 7);  // world, 4 tp pairs, 2 dp groups
  trace::Trace got = one.trace;
  got.program = every.trace.program;
  CHECK(got == every.trace);
  // The notes count the skipped waits of all 8 ranks, as the 8 files do.
  CHECK(std::find(one.notes.begin(), one.notes.end(), every.notes.front()) != one.notes.end());
  CHECK_THAT(every.notes.front(), Contains("skipped 16 call(s) named 'wait'"));
  twinccl::sim::check_trace(one.trace, "replicated");
}

TEST_CASE("torch replicate: the group rule") {
  std::vector<int> out;
  std::string why;
  // tp pairs and strided dp groups of an 8-rank world (torch_groups.cc's picture)
  REQUIRE(trace::replicated_group({0, 1}, 0, 5, 8, out, why));
  CHECK(out == std::vector<int>{4, 5});
  REQUIRE(trace::replicated_group({0, 2, 4, 6}, 0, 5, 8, out, why));
  CHECK(out == std::vector<int>{1, 3, 5, 7});
  REQUIRE(trace::replicated_group({1, 3, 5, 7}, 3, 6, 8, out, why));
  CHECK(out == std::vector<int>{0, 2, 4, 6});
  // 2 pipeline stages of tp 2 x dp 2: the dp group of stage 1 seen from rank 5, for rank 2
  REQUIRE(trace::replicated_group({5, 7}, 5, 2, 8, out, why));
  CHECK(out == std::vector<int>{0, 2});
  REQUIRE(trace::replicated_group({3, 0, 1, 2}, 1, 2, 4, out, why));  // every rank: itself
  CHECK(out == std::vector<int>{3, 0, 1, 2});
  REQUIRE(trace::replicated_group({6}, 6, 1, 7, out, why));
  CHECK(out == std::vector<int>{1});
  CHECK_FALSE(trace::replicated_group({0, 1, 5}, 0, 2, 8, out, why));
  CHECK_THAT(why, Contains("not evenly spaced (rank 2 expected at 2, found 5)"));
  CHECK_FALSE(trace::replicated_group({0, 1, 2, 3}, 0, 4, 6, out, why));
  CHECK_THAT(why, Contains("blocks of 4 ranks, which do not tile the world of 6"));
  CHECK_FALSE(trace::replicated_group({1, 2}, 1, 4, 8, out, why));
  CHECK_THAT(why, Contains("starts at rank 1, not where rank 1's block of 2 ranks does (0)"));
  CHECK_FALSE(trace::replicated_group({2, 0}, 0, 1, 8, out, why));
  CHECK_THAT(why, Contains("not in ascending order"));
  CHECK_FALSE(trace::replicated_group({0, 1}, 0, 9, 8, out, why));
  CHECK_THAT(why, Contains("rank 9 is outside the world of 8"));
}

TEST_CASE("torch replicate: refused where the other ranks cannot be told") {
  SECTION("send/recv: the first p2p op is named") {
    TorchRankBuilder b(0, 4);
    b.call("allreduce", "Float", 8, 8);
    b.call("send", "Float", 8, 8, {{"Dst Rank", 1}});
    CHECK_THAT(refusal(twinccl_test::texts({b})),
               Contains("rank0.json: traceEvents[2] (send), op 1: --replicate-missing-ranks "
                        "(replicate_missing_ranks) cannot build the other ranks of a job with "
                        "send/recv"));
  }
  SECTION("a hand-picked group") {
    TorchRankBuilder b(0, 8);
    b.call("allreduce", "Float", 8, 8, {{"Process Group Description", "experts"}}, "[0, 1, 5]");
    CHECK_THAT(refusal(twinccl_test::texts({b})),
               Contains("rank0.json: traceEvents[0] (allreduce): --replicate-missing-ranks "
                        "(replicate_missing_ranks) cannot tell the other ranks' counterparts of "
                        "process group 'experts' (ranks 0-1, 5): its ranks are not evenly spaced"));
  }
  SECTION("blocks that do not tile the world") {
    TorchRankBuilder b(0, 6);
    b.call("allreduce", "Float", 8, 8, {}, "[0, 1, 2, 3]");
    CHECK_THAT(refusal(twinccl_test::texts({b})), Contains("do not tile the world of 6"));
  }
  SECTION("the trace's caps on all ranks together") {
    TorchRankBuilder b(0, 4096);
    for (int k = 0; k < 300; ++k)  // 300 x 4096 ops > 2^20
      b.call("allreduce", "Float", 8, 8, {{"Process Group Ranks", "[0, 1, ...]"}}, "", false);
    CHECK_THAT(refusal(twinccl_test::texts({b})),
               Contains("--replicate-missing-ranks (replicate_missing_ranks): the job has more "
                        "than 1048576 operations"));
  }
  SECTION("without the option, the missing ranks' error names it") {
    TorchRankBuilder b(0, 3);
    b.call("allreduce", "Float", 8, 8);
    try {
      trace::import_torch_traces(twinccl_test::texts({b}));
      FAIL("no ConfigError");
    } catch (const twinccl::ConfigError& e) {
      CHECK_THAT(e.what(), Contains("missing rank(s) 1, 2; give every rank's file or"));
      CHECK_THAT(e.what(), Contains("--replicate-missing-ranks builds the others from rank 0's"));
    }
  }
}

TEST_CASE("torch replicate: given files beside the profiled one are kept as they are") {
  std::vector<TorchRankBuilder> all;
  for (int r = 0; r < 8; ++r) all.push_back(tp_dp_rank(r));
  const trace::TorchImport two = replicated({all[6], all[1]});  // rank 1 is replicated
  CHECK(two.replicated_from == 1);
  CHECK(two.replicated == std::vector<int>{0, 2, 3, 4, 5, 7});
  twinccl::sim::check_trace(two.trace, "replicated");
  const trace::TorchImport none = replicated(all);  // nothing missing: nothing said
  CHECK(none.replicated_from == -1);
  CHECK(none.trace == trace::import_torch_traces(twinccl_test::texts(all)).trace);
}
