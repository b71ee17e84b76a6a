// The trace file format: round trip, version check and errors that name the field.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "replay_traces.h"
#include "support/scratch_dir.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay_trace.h"

using namespace twinccl;
using namespace twinccl::sim;
using namespace twinccl::sim::testing;

namespace {

Trace sample() {
  TraceBuilder b(3);
  const int w = b.comm("world", {0, 1, 2});
  const int pair = b.comm("pair", {2, 0});
  b.blocking_all(w, OpKind::all_reduce, 7);
  for (int r : {0, 2}) {
    const int op = b.issue(r, pair, OpKind::all_gather, 0);
    b.compute(r, 1.5e-3, 2e12);
    b.wait(r, op);
  }
  Trace t = b.trace();
  t.program = "sample";
  TraceOp& op = t.ranks[1].ops[0];
  op.algorithm = "tree";
  op.async = true;
  op.group = 3;
  op.issue_s = 0.25;
  op.complete_s = 0.5;
  for (RankTrace& rt : t.ranks) rt.ops[0].counts = {1, 2, 3};  // ranks agree on an op's counts
  return t;
}

}  // namespace

TEST_CASE("trace file: JSON round trip keeps every field") {
  const Trace t = sample();
  const Trace back = trace_from_json(to_json(t));
  CHECK(back == t);
  const twinccl_test::ScratchDir scratch("twinccl_test_trace_roundtrip");
  const std::filesystem::path path = scratch.path("trace.json");
  save_trace(t, path);
  CHECK(load_trace(path) == t);
  const nlohmann::json doc = nlohmann::json::parse(to_json(t));
  CHECK(doc["version"] == kTraceFormatVersion);
  CHECK(doc["format"] == "twinccl-trace");
  CHECK(doc["world_size"] == 3);
}

TEST_CASE("trace file: another version is refused and says which versions") {
  nlohmann::json doc = nlohmann::json::parse(to_json(sample()));
  doc["version"] = 99;
  REQUIRE_THROWS_AS(trace_from_json(doc.dump(), "old.json"), ConfigError);
  REQUIRE_THROWS_WITH(trace_from_json(doc.dump(), "old.json"),
                      Catch::Contains("old.json: version: is 99; this TwinCCL reads version 1"));
}

TEST_CASE("trace file: malformed files name the source, the path and the value") {
  const nlohmann::json good = nlohmann::json::parse(to_json(sample()));
  nlohmann::json bad = good;
  bad["ranks"][1]["ops"][0]["dtype"] = "float13";
  REQUIRE_THROWS_WITH(trace_from_json(bad.dump(), "t.json"),
                      Catch::Contains("t.json: ranks[1].ops[0].dtype"));
  bad = good;
  bad["ranks"][0]["events"][0] = {{"op", 42}};
  REQUIRE_THROWS_WITH(trace_from_json(bad.dump(), "t.json"),
                      Catch::Contains("ranks[0].events[0]") && Catch::Contains("op 42"));
  bad = good;
  bad["communicators"][1]["ranks"] = {0, 5};
  REQUIRE_THROWS_WITH(trace_from_json(bad.dump(), "t.json"), Catch::Contains("world rank 5"));
  bad = good;
  bad.erase("format");
  REQUIRE_THROWS_WITH(trace_from_json(bad.dump(), "t.json"), Catch::Contains("twinccl-trace"));
  REQUIRE_THROWS_WITH(trace_from_json("{not json", "t.json"), Catch::Contains("not valid JSON"));
  bad = good;
  bad["ranks"][0]["events"][1] = {{"compute_s", -1.0}};
  REQUIRE_THROWS_WITH(trace_from_json(bad.dump(), "t.json"),
                      Catch::Contains("compute must be >= 0"));
  REQUIRE_THROWS_WITH(load_trace("/nonexistent/trace.json"),
                      Catch::Contains("/nonexistent/trace.json"));
}
