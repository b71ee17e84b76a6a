// Hostile traces (issue 9): every malformed, oversized or inconsistent trace ends in a typed error
// naming the file, the place and the value, before any simulation; nothing crashes or hangs.
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "replay_traces.h"
#include "sim_topologies.h"
#include "support/scratch_dir.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay.h"

using namespace twinccl;
using namespace twinccl::sim;
using namespace twinccl::sim::testing;
using nlohmann::json;

namespace {

// Two ranks on 'world': all_reduce, then compute, then all_gather.
json good() {
  TraceBuilder b(2);
  const int w = b.comm("world", {0, 1});
  b.blocking_all(w, OpKind::all_reduce, 16);
  b.compute(0, 1e-3);
  b.blocking_all(w, OpKind::all_gather, 16);
  return json::parse(to_json(b.trace()));
}

std::string edited(const std::function<void(json&)>& edit) {
  json doc = good();
  edit(doc);
  return doc.dump();
}

// Message of the ConfigError `text` makes trace_from_json throw (fails the test otherwise).
std::string config_error(const std::string& text) {
  try {
    trace_from_json(text, "t.json");
  } catch (const ConfigError& e) {
    return e.what();
  }
  FAIL("no ConfigError");
  return {};
}

json op(const char* kind, int seq, int peer = -1) {
  json j = {{"kind", kind}, {"comm", 0}, {"seq", seq}, {"count", 16}, {"dtype", "float32"}};
  if (peer >= 0) j["peer"] = peer;
  return j;
}

json two_ranks(json ops0, json events0, json ops1, json events1) {
  return {{"format", "twinccl-trace"},
          {"version", 1},
          {"world_size", 2},
          {"communicators", {{{"name", "world"}, {"ranks", {0, 1}}}}},
          {"ranks", {{{"ops", ops0}, {"events", events0}}, {{"ops", ops1}, {"events", events1}}}}};
}

}  // namespace

TEST_CASE("hostile trace: deep nesting is refused, not a stack overflow") {
  const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
  const std::string text = edited([](json& d) { d["ranks"][0]["events"][0] = {{"op", 0}}; });
  const std::string hostile = text.substr(0, text.find("{\"op\":0}")) + "{\"op\":" + deep + "}" +
                              text.substr(text.find("{\"op\":0}") + 8);
  CHECK_THAT(config_error(hostile),
             Catch::Contains("t.json") && Catch::Contains("nesting deeper than"));
}

TEST_CASE("hostile trace: a file of many operations is read in linear time") {
  // nlohmann's parse with a callback scanned the whole enclosing array after every object: 300k
  // ops took minutes (a 100k-op trace 39 s); the bounded reader now counts in a first pass.
  TraceBuilder b(2);
  const int w = b.comm("world", {0, 1});
  b.blocking_all(w, OpKind::all_reduce, 16);
  json doc = json::parse(to_json(b.trace()));
  json& ops = doc["ranks"][0]["ops"];
  const json op = ops[0];
  for (int i = 1; i < 300000; ++i) ops.push_back(op);  // parsed, then refused by the checks
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(trace_from_json(doc.dump(), "many.json"), ConfigError);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 30.0);  // ~0.5 s here; the quadratic reader needed minutes
}

TEST_CASE(
    "hostile trace: numbers are exact, finite and in range, messages are short and name the "
    "field") {
  // 1e309 overflows a double: nlohmann's own exception must not escape.
  std::string text = edited([](json& d) { d["ranks"][0]["events"][2] = {{"compute_s", 1.0}}; });
  text.replace(text.find("\"compute_s\":1.0"), 15, "\"compute_s\":1e309");
  CHECK_THAT(config_error(text), Catch::Contains("t.json") && !Catch::Contains("[json.exception"));
  // 2^32 is not silently cut to communicator 0; -1 is not a huge count; 2.5 is not 2.
  CHECK_THAT(config_error(edited([](json& d) { d["ranks"][0]["ops"][0]["comm"] = 4294967296ULL; })),
             Catch::Contains("ranks[0].ops[0].comm") && Catch::Contains("4294967296"));
  CHECK_THAT(config_error(edited([](json& d) { d["ranks"][1]["ops"][0]["count"] = -1; })),
             Catch::Contains("ranks[1].ops[0].count"));
  CHECK_THAT(config_error(edited([](json& d) { d["ranks"][1]["ops"][0]["count"] = 2.5; })),
             Catch::Contains("must be a whole number"));
  // compute_s 1e308 used to replay as "inf".
  CHECK_THAT(config_error(edited([](json& d) {
               d["ranks"][0]["events"][2] = {{"compute_s", 1e308}};
             })),
             Catch::Contains("ranks[0].events[2]") && Catch::Contains("1e+308") &&
                 Catch::Contains("1e+06"));
  CHECK_THAT(config_error(edited([](json& d) {
               d["ranks"][0]["events"][2] = {{"compute_flops", 1e300}};
             })),
             Catch::Contains("compute_flops"));
  // count x element size beyond the per-operation cap (also where the product would wrap 2^64).
  CHECK_THAT(config_error(edited([](json& d) { d["ranks"][0]["ops"][0]["count"] = 1ULL << 62; })),
             Catch::Contains("cap") && Catch::Contains("bytes per operation"));
  // A wrong type holding megabytes is described, not echoed.
  const std::string big(10 << 20, 'x');
  for (const std::string& msg :
       {config_error(edited([&](json& d) {
          d["ranks"][0]["ops"][0]["kind"] = {{"k", big}};
        })),
        config_error(edited([&](json& d) { d["ranks"][0]["ops"][0]["dtype"] = big; })),
        config_error(edited([&](json& d) { d["format"] = big; }))}) {
    CHECK(msg.size() < 400);
  }
}

TEST_CASE("hostile trace: replay options that would make times infinite are refused") {
  Trace t = trace_from_json(good().dump());
  ReplayOptions o;
  o.compute_scale = 1e300;  // 1 ms of compute x 1e300 used to print "inf"
  CHECK_THROWS_WITH(replay(t, star(2, 100.0, 0.5), o), Catch::Contains("compute_scale"));
  o.compute_scale = 1.0;
  o.compute_tflops = -1.0;
  CHECK_THROWS_AS(replay(t, star(2, 100.0, 0.5), o), InvalidArgument);
}

TEST_CASE("hostile trace: a forced algorithm no collective has is refused, not ignored") {
  // `replay --algo nonsense` used to replay with the tuner's choices and exit 0.
  Trace t = trace_from_json(good().dump());
  ReplayOptions o;
  o.algorithm = "nonsense";
  CHECK_THROWS_WITH(replay(t, star(2, 100.0, 0.5), o),
                    Catch::Contains("unknown algorithm 'nonsense'") && Catch::Contains("ring"));
  o.algorithm = "ring";  // exists: forced where the collective has it
  CHECK(replay(t, star(2, 100.0, 0.5), o).total_us > 0.0);
}

TEST_CASE("hostile trace: caps on ranks and operations are stated in the message") {
  Trace wide;
  wide.ranks.resize(static_cast<std::size_t>(kMaxTraceRanks) + 1);
  CHECK_THROWS_WITH(check_trace(wide, "wide.json"), Catch::Contains("wide.json") &&
                                                        Catch::Contains("65537 ranks") &&
                                                        Catch::Contains("cap of 65536"));
  Trace many;
  many.communicators.push_back({"world", {0}});
  many.ranks.resize(1);
  many.ranks[0].ops.resize(kMaxTraceOps + 1);
  CHECK_THROWS_WITH(check_trace(many, "many.json"),
                    Catch::Contains("many.json") && Catch::Contains("cap of 1048576 operations"));
  CHECK_THAT(config_error(edited([](json& d) { d["world_size"] = 1 << 30; })),
             Catch::Contains("world_size") && Catch::Contains("65536"));
}

TEST_CASE("hostile trace: the caps still allow bench_replay_scale's 1024 ranks x 100 collectives") {
  TraceBuilder b(1024);
  std::vector<int> all(1024);
  for (int r = 0; r < 1024; ++r) all[static_cast<std::size_t>(r)] = r;
  const int world = b.comm("world", all);
  std::vector<int> tp;
  for (int g = 0; g < 128; ++g)
    tp.push_back(b.comm("tp" + std::to_string(g), {8 * g, 8 * g + 1, 8 * g + 2, 8 * g + 3,
                                                   8 * g + 4, 8 * g + 5, 8 * g + 6, 8 * g + 7}));
  for (int k = 0; k < 100; ++k) {
    for (int r = 0; r < 1024; ++r) {
      if (k % 4 == 3)
        b.blocking(r, world, OpKind::all_reduce, 64 << 20);
      else
        b.blocking(r, tp[static_cast<std::size_t>(r / 8)], OpKind::all_gather, 4 << 20);
      b.compute(r, 0.0, 2e11);
    }
  }
  CHECK_NOTHROW(check_trace(b.trace(), "bench"));
}

TEST_CASE("hostile trace: waits before issues, ops issued twice or never, broken groups") {
  CHECK_THAT(config_error(two_ranks({op("all_reduce", 0)}, {{{"wait", 0}}, {{"op", 0}}},
                                    {op("all_reduce", 0)}, {{{"op", 0}}, {{"wait", 0}}})
                              .dump()),
             Catch::Contains("t.json: ranks[0].events[0]") && Catch::Contains("before issuing it"));
  CHECK_THAT(config_error(two_ranks({op("all_reduce", 0)}, {{{"op", 0}}, {{"op", 0}}},
                                    {op("all_reduce", 0)}, {{{"op", 0}}})
                              .dump()),
             Catch::Contains("ranks[0].events[1]") && Catch::Contains("a second time"));
  CHECK_THAT(config_error(two_ranks({op("all_reduce", 0)}, json::array(), {op("all_reduce", 0)},
                                    {{{"op", 0}}})
                              .dump()),
             Catch::Contains("ranks[0].ops[0]") && Catch::Contains("never issued"));
  // A group waited before all its ops were issued: SimGrid used to abort with a backtrace.
  json send = op("send", 0, 1), recv = op("recv", 0, 1);
  send["group"] = recv["group"] = 1;
  CHECK_THAT(
      config_error(two_ranks({send, recv}, {{{"op", 0}}, {{"wait", 0}}, {{"op", 1}}, {{"wait", 1}}},
                             {op("recv", 0, 0), op("send", 0, 0)}, {{{"op", 0}}, {{"op", 1}}})
                       .dump()),
      Catch::Contains("ranks[0].events[1]") && Catch::Contains("group 1") &&
          Catch::Contains("send #0"));
  CHECK_THAT(config_error(two_ranks({send, recv, op("all_reduce", 0)},
                                    {{{"op", 0}}, {{"op", 2}}, {{"op", 1}}},
                                    {op("recv", 0, 0), op("send", 0, 0), op("all_reduce", 0)},
                                    {{{"op", 0}}, {{"op", 1}}, {{"op", 2}}})
                              .dump()),
             Catch::Contains("ranks[0].events[1]") && Catch::Contains("while group 1"));
}

TEST_CASE("hostile trace: ranks that disagree or issue collectives in different orders are named") {
  json r1 = op("broadcast", 0);
  json r0 = r1;
  r0["root"] = 0;
  r1["root"] = 1;
  CHECK_THAT(config_error(two_ranks({r0}, {{{"op", 0}}}, {r1}, {{{"op", 0}}}).dump()),
             Catch::Contains("broadcast #0 on comm 'world'") && Catch::Contains("root=1 vs 0"));
  CHECK_THAT(config_error(
                 two_ranks({op("send", 0, 1)}, {{{"op", 0}}}, json::array(), json::array()).dump()),
             Catch::Contains("send #0 on comm 'world'") &&
                 Catch::Contains("rank 1 never issues the matching recv"));
  CHECK_THAT(
      config_error(two_ranks({op("all_reduce", 0), op("all_gather", 1)}, {{{"op", 0}}, {{"op", 1}}},
                             {op("all_reduce", 0), op("all_gather", 1)}, {{{"op", 1}}, {{"op", 0}}})
                       .dump()),
      Catch::Contains("ranks[1].events[0]") && Catch::Contains("all_gather #1") &&
          Catch::Contains("all_reduce #0") && Catch::Contains("same order"));
}

TEST_CASE(
    "hostile trace: a replay that would deadlock is a DeadlockError naming the stuck rank and "
    "why") {
  // Blocking send then recv on both ranks: each send waits for the other's recv.
  const json p2p = two_ranks({op("send", 0, 1), op("recv", 0, 1)},
                             {{{"op", 0}}, {{"wait", 0}}, {{"op", 1}}, {{"wait", 1}}},
                             {op("send", 0, 0), op("recv", 0, 0)},
                             {{{"op", 0}}, {{"wait", 0}}, {{"op", 1}}, {{"wait", 1}}});
  CHECK_THROWS_AS(trace_from_json(p2p.dump(), "p2p.json"), DeadlockError);
  CHECK_THROWS_WITH(
      trace_from_json(p2p.dump(), "p2p.json"),
      Catch::StartsWith(
          "p2p.json: replay deadlock: rank 0 is stuck at ranks[0].events[1] (wait for "
          "send #0 on comm 'world')") &&
          Catch::Contains("rank 1 never reaches recv #0") && Catch::Contains("2 of 2 ranks"));
  // Two communicators in opposite orders: each order check passes, the dry run does not.
  TraceBuilder b(2);
  const int a = b.comm("a", {0, 1});
  const int c = b.comm("c", {0, 1});
  b.blocking(0, a, OpKind::all_reduce, 8);
  b.blocking(0, c, OpKind::all_reduce, 8);
  b.blocking(1, c, OpKind::all_reduce, 8);
  b.blocking(1, a, OpKind::all_reduce, 8);
  CHECK_THROWS_AS(check_trace(b.trace(), "x.json"), DeadlockError);
  CHECK_THROWS_WITH(
      check_trace(b.trace(), "x.json"),
      Catch::Contains("all_reduce #0 on comm 'a'") && Catch::Contains("all_reduce #0 on comm 'c'"));
  // replay() refuses it before SimGrid (it used to end in "killed by signal 6 ... not a problem of
  // the request").
  CHECK_THROWS_AS(replay(b.trace(), star(2, 100.0, 0.5)), DeadlockError);
}

TEST_CASE("hostile trace: errors from a file name the file") {
  const twinccl_test::ScratchDir scratch("twinccl_test_hostile_deadlock");
  const std::filesystem::path path = scratch.path("deadlock.json");
  {
    std::ofstream f(path);
    f << two_ranks({op("all_reduce", 0)}, {{{"wait", 0}}, {{"op", 0}}}, {op("all_reduce", 0)},
                   {{{"op", 0}}})
             .dump();
  }
  CHECK_THROWS_WITH(load_trace(path), Catch::StartsWith(path.string() + ": ranks[0].events[0]"));
  CHECK_THROWS_WITH(load_trace(path.parent_path()), Catch::Contains("is a directory"));
}
