// The PyTorch trace importer on bad input: every problem is a ConfigError naming the file, the
// rank, the op or event and the field with its value; never a crash or an untyped exception.
#include <catch2/catch.hpp>

#include "torch_trace_builder.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay_trace.h"
#include "twinccl/trace/torch_import.h"

using Catch::Matchers::Contains;
using twinccl_test::TorchRankBuilder;
namespace trace = twinccl::trace;

namespace {

std::vector<TorchRankBuilder> two_ranks() {
  std::vector<TorchRankBuilder> ranks = {TorchRankBuilder(0, 2), TorchRankBuilder(1, 2)};
  for (TorchRankBuilder& r : ranks) {
    r.call("allreduce", "Float", 1024, 1024);
    r.call("broadcast", "Long", 8, 8);
  }
  return ranks;
}

std::string error_of(const std::vector<trace::TorchTraceText>& files) {
  try {
    trace::import_torch_traces(files);
  } catch (const twinccl::ConfigError& e) {
    return e.what();
  }
  FAIL("no ConfigError");
  return "";
}

}  // namespace

TEST_CASE("torch import hostile: files that are not one job") {
  SECTION("no file") { CHECK_THAT(error_of({}), Contains("no profiler trace given")); }
  SECTION("a rank missing") {
    auto files = twinccl_test::texts(two_ranks());
    files.pop_back();
    CHECK_THAT(error_of(files), Contains("missing rank(s) 1"));
  }
  SECTION("a rank twice") {
    auto files = twinccl_test::texts(two_ranks());
    files[1].text = files[0].text;
    CHECK_THAT(error_of(files),
               Contains("rank1.json: distributedInfo.rank is 0, as in rank0.json"));
  }
  SECTION("different world sizes") {
    std::vector<TorchRankBuilder> ranks = {TorchRankBuilder(0, 2), TorchRankBuilder(1, 3)};
    CHECK_THAT(error_of(twinccl_test::texts(ranks)),
               Contains("rank1.json: distributedInfo.world_size is 3, where rank0.json has 2"));
  }
}

TEST_CASE("torch import hostile: ranks that disagree") {
  SECTION("collectives in another order") {
    std::vector<TorchRankBuilder> ranks = {TorchRankBuilder(0, 2), TorchRankBuilder(1, 2)};
    ranks[0].call("allreduce", "Float", 1024, 1024);
    ranks[0].call("broadcast", "Float", 1024, 1024);
    ranks[1].call("broadcast", "Float", 1024, 1024);
    ranks[1].call("allreduce", "Float", 1024, 1024);
    CHECK_THAT(error_of(twinccl_test::texts(ranks)),
               Contains("rank1.json (rank 1): op 0 (broadcast #0 on comm 'pg 0'): kind broadcast, "
                        "where rank0.json (rank 0) op 0 has all_reduce"));
  }
  SECTION("another count") {
    std::vector<TorchRankBuilder> ranks = two_ranks();
    ranks[1].call("allreduce", "Float", 10, 10);
    ranks[0].call("allreduce", "Float", 20, 20);
    CHECK_THAT(error_of(twinccl_test::texts(ranks)),
               Contains("op 2 (all_reduce #2 on comm 'pg 0'): count 10, where rank0.json (rank 0) "
                        "op 2 has 20"));
  }
  SECTION("a collective only one rank issued") {
    std::vector<TorchRankBuilder> ranks = two_ranks();
    ranks[0].call("allreduce", "Float", 10, 10);
    CHECK_THAT(error_of(twinccl_test::texts(ranks)),
               Contains("rank1.json (rank 1) has 2 collective(s) on comm 'pg 0', rank0.json "
                        "(rank 0) has 3"));
  }
  SECTION("a send without its recv") {
    std::vector<TorchRankBuilder> ranks = two_ranks();
    ranks[0].call("send", "Float", 8, 8, {{"Dst Rank", 1}});
    CHECK_THAT(error_of(twinccl_test::texts(ranks)),
               Contains("rank0.json (rank 0): op 2 (send #0 on comm 'pg 0' to rank 1): rank1.json "
                        "(rank 1) has no matching recv"));
  }
}

TEST_CASE("torch import hostile: fields of the wrong type or value") {
  auto with = [](const nlohmann::json& extra, const std::string& name = "allreduce",
                 long long in = 16, long long out = 16) {
    std::vector<TorchRankBuilder> ranks = two_ranks();
    for (TorchRankBuilder& r : ranks) r.call(name, "Float", in, out, extra);
    return error_of(twinccl_test::texts(ranks));
  };
  CHECK_THAT(with({{"In msg nelems", "x"}}),
             Contains("rank0.json: traceEvents[4] (record_param_comms): 'In msg nelems': must be "
                      "a whole number, is string \"x\""));
  CHECK_THAT(with({{"In msg nelems", -1}}), Contains("'In msg nelems': number -1 is outside"));
  CHECK_THAT(with({{"In msg nelems", 1e300}}), Contains("must be a whole number"));
  CHECK_THAT(with({{"dtype", "ComplexFloat"}}),
             Contains("'dtype': 'ComplexFloat' is not a type TwinCCL knows"));
  CHECK_THAT(with({{"Process Group Ranks", "[0, x]"}}),
             Contains("'Process Group Ranks': must be a list of whole numbers"));
  CHECK_THAT(with({{"Process Group Ranks", "[0, 0]"}}), Contains("lists rank 0 twice"));
  CHECK_THAT(with({{"Process Group Ranks", "[0, 7]"}}),
             Contains("lists rank 7 outside the world of 2"));
  CHECK_THAT(with({{"Process Group Ranks", "[0, 1, 2]"}}),
             Contains("'Group size' is 2 but 'Process Group Ranks' lists 3 ranks"));
  CHECK_THAT(with({{"Group size", 1}, {"Process Group Ranks", "[0, ...]"}}),
             Contains("the members of process group '0' (1 of 2 ranks) are unknown"));
  CHECK_THAT(with({}, "all_to_all", 3, 3), Contains("'In msg nelems': 3 is not a multiple of the "
                                                    "group's 2 ranks"));
  CHECK_THAT(with({}, "_allgather_base", 4, 4),
             Contains("'Out msg nelems': is 4, expected 8 (all_gather writes group size x input)"));
  CHECK_THAT(with({{"In split size", "[1, ..., 3]"}}, "all_to_allv", 8, 8),
             Contains("cut the list short"));
  CHECK_THAT(with({{"Dst Rank", 5}}, "send", 8, 8), Contains("'Dst Rank': rank 5 is not in"));
  CHECK_THAT(with({{"Collective name", 7}}), Contains("'Collective name': must be a string"));
}

TEST_CASE("torch import hostile: files that are not profiler traces of a distributed run") {
  auto error_one = [](const std::string& text) { return error_of({{"bad.json", text}}); };
  CHECK_THAT(error_one("{"), Contains("bad.json: not valid JSON"));
  CHECK_THAT(error_one("[1, 2]"), Contains("bad.json: must be a JSON object"));
  CHECK_THAT(error_one(std::string(40, '[') + std::string(40, ']')),
             Contains("bad.json: nesting deeper than 32 levels"));
  CHECK_THAT(error_one(R"({"traceEvents": []})"), Contains("no 'distributedInfo' object"));
  CHECK_THAT(error_one(R"({"distributedInfo": {"rank": 0, "world_size": 1}})"),
             Contains("no 'traceEvents' array"));
  CHECK_THAT(error_one(R"({"distributedInfo": {"rank": 3, "world_size": 2}, "traceEvents": []})"),
             Contains("bad.json: distributedInfo: 'rank': number 3 is outside 0..1"));
  CHECK_THAT(error_one(R"({"distributedInfo": {"rank": 0, "world_size": 1},
                          "traceEvents": [7]})"),
             Contains("bad.json: traceEvents[0]: must be an object, is number 7"));
  // PyTorch 2.0's record_param_comms (HTA's trace_filter samples): no collective arguments.
  CHECK_THAT(error_one(R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [
                          {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "ts": 5,
                           "dur": 1, "args": {"External id": 41956, "Input Dims": [[], []]}}]})"),
             Contains("traceEvents[0] (record_param_comms): no 'Collective name' in its args: "
                      "profiles written by older PyTorch versions"));
  CHECK_THAT(error_one(R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [
                          {"cat": "kernel", "name": "gemm", "ts": "soon", "dur": 1}]})"),
             Contains("traceEvents[0] (kernel): 'ts': must be a number, is string \"soon\""));
  CHECK_THAT(error_one(R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [
                          {"cat": "kernel", "name": "gemm", "ts": 0, "dur": 1e17},
                          {"ph": "X", "name": "record_param_comms", "ts": 1e17, "args": {
                           "Collective name": "barrier"}}]})"),
             Contains("over the cap of"));
}

TEST_CASE("torch import hostile: two groups used in opposite orders deadlock in check_trace") {
  // Each rank waits for each call before the next (no kernels: a CPU-only profile), rank 0 on
  // group 1 then 2, rank 1 on group 2 then 1: each group's order agrees, the job cannot run.
  std::vector<TorchRankBuilder> ranks = {TorchRankBuilder(0, 2), TorchRankBuilder(1, 2)};
  for (int r = 0; r < 2; ++r) {
    for (int k = 0; k < 2; ++k) {
      const std::string pg = (r + k) % 2 == 0 ? "1" : "2";
      ranks[static_cast<std::size_t>(r)].call("allreduce", "Float", 8, 8,
                                              {{"Process Group Name", pg}}, "", false);
    }
  }
  const trace::Trace t = trace::import_torch_traces(twinccl_test::texts(ranks)).trace;
  REQUIRE(t.communicators.size() == 2);
  CHECK_THROWS_AS(twinccl::sim::check_trace(t, "imported"), twinccl::DeadlockError);
}

TEST_CASE("torch import hostile: a world size of 0 is refused, not indexed") {
  // fuzz5 (libFuzzer, UBSan): "world_size": 0 passed the 1.. check (nlohmann reads 0 as unsigned,
  // whose branch checked only the top of the range), then rank 0 indexed an empty list of files.
  std::string text = TorchRankBuilder(0, 1).text();
  const std::string from = "\"world_size\":1";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), "\"world_size\":0");
  CHECK_THAT(error_of({{"r0.json", text}}),
             Contains("r0.json: distributedInfo: 'world_size': number 0 is outside 1..65536"));
}
