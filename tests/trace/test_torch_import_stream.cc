// The PyTorch trace importer reads a file as a stream, building one event at a time with only the
// fields it reads (trace/src/torch_json.cc). Checked on the real excerpts (tests/trace/data): the
// result against an expectation computed here from the whole document (nlohmann's DOM), the same
// whatever the key order, whitespace or fields it skips, the same from a stream as from a string;
// and errors in the order a parse-then-read importer gives them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../../trace/src/torch_json.h"  // the streaming reader's caps, tested directly
#include "torch_trace_builder.h"
#include "twinccl/errors.h"
#include "twinccl/trace/torch_import.h"

using Catch::Matchers::Contains;
namespace trace = twinccl::trace;
using nlohmann::json;

namespace {

// The DDP excerpt as both ranks of its 2-rank job (rank 1 a copy, as SOURCES.md says).
std::vector<trace::TorchTraceText> ddp_job(const json& rank0) {
  json rank1 = rank0;
  rank1["distributedInfo"]["rank"] = 1;
  return {{"r0.json", rank0.dump()}, {"r1.json", rank1.dump()}};
}

std::string error_of(const std::string& text) {
  try {
    trace::import_torch_traces({{"bad.json", text}});
  } catch (const twinccl::ConfigError& e) {
    return e.what();
  }
  return "no ConfigError";
}

}  // namespace

TEST_CASE("torch import stream: the DDP excerpt's op times and compute, computed from its DOM") {
  const json doc = json::parse(twinccl_test::torch_data_file("hta_nccl_data_rank0.json"));
  // Expected, from the whole document: each call's NCCL kernel by External id; compute is the
  // union of the non-NCCL GPU activities on streams that ran a non-NCCL kernel.
  std::map<long long, std::pair<double, double>> nccl;  // External id -> kernel start, end (us)
  std::map<long long, bool> compute_stream;
  std::vector<json> calls, activities;
  for (const json& e : doc["traceEvents"]) {
    const std::string name = e.value("name", ""), cat = e.value("cat", "");
    if (name == "record_param_comms" && e["args"]["Collective name"] != "wait") calls.push_back(e);
    if (cat != "kernel" && cat != "gpu_memcpy" && cat != "gpu_memset") continue;
    const bool is_nccl = cat == "kernel" && name.rfind("nccl", 0) == 0;
    const double ts = e["ts"].get<double>(), end = ts + e["dur"].get<double>();
    if (is_nccl) nccl[e["args"]["External id"].get<long long>()] = {ts, end};
    if (cat == "kernel" && !is_nccl) compute_stream[e["args"]["stream"].get<long long>()] = true;
    if (!is_nccl) activities.push_back(e);
  }
  std::stable_sort(calls.begin(), calls.end(), [](const json& a, const json& b) {
    return a["ts"].get<double>() < b["ts"].get<double>();
  });
  std::vector<std::pair<double, double>> spans;
  for (const json& e : activities) {
    if (compute_stream.contains(e["args"]["stream"].get<long long>())) {
      const double ts = e["ts"].get<double>();
      spans.emplace_back(ts, ts + e["dur"].get<double>());
    }
  }
  std::sort(spans.begin(), spans.end());
  double union_us = 0, reach = -1e300;
  for (const auto& [s, e] : spans) {
    if (e > reach) union_us += e - std::max(s, reach);
    reach = std::max(reach, e);
  }

  const trace::Trace t = trace::import_torch_traces(ddp_job(doc)).trace;
  const trace::RankTrace& rt = t.ranks[0];
  REQUIRE(rt.ops.size() == calls.size());
  REQUIRE(calls.size() == 21);
  const double t0 = nccl.at(calls[0]["args"]["External id"].get<long long>()).first;
  double issued = t0;
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const auto& [start, end] = nccl.at(calls[i]["args"]["External id"].get<long long>());
    issued = std::max(issued, start);  // issued in CPU order (docs/traces.md)
    INFO("op " << i);
    CHECK(rt.ops[i].issue_s == Approx((issued - t0) * 1e-6).margin(1e-9));
    CHECK(rt.ops[i].complete_s == Approx((std::max(end, issued) - t0) * 1e-6).margin(1e-9));
  }
  double compute_s = 0;
  for (const trace::TraceEvent& e : rt.events) compute_s += e.seconds;
  CHECK(compute_s == Approx(union_us * 1e-6).margin(1e-9));
  CHECK(compute_s > 0.01);  // 15.6 ms in this excerpt (its compute is trimmed, SOURCES.md)
}

TEST_CASE("torch import stream: key order, whitespace and fields it does not read change nothing") {
  const std::string text = twinccl_test::torch_data_file("hta_nccl_data_rank0.json");
  const json doc = json::parse(text);
  const trace::TorchImport original = trace::import_torch_traces(ddp_job(doc));
  // The file as written (Kineto's order: "name" and "cat" before "args") vs re-dumped with its
  // keys sorted ("args" first), indented, with fields and events no reader looks at added.
  json noisy = doc;
  noisy["deviceProperties"] = json::array({{{"id", 0}, {"name", "A100"}, {"regs", {1, 2, 3}}}});
  json events = json::array();
  for (json e : doc["traceEvents"]) {
    e["zz unread"] = {{"Input Dims", {{1, 2}, {3, 4}}}, {"s", "x"}};
    if (e.contains("args") && e["args"].is_object()) e["args"]["Input type"] = {"float", ""};
    events.push_back(e);
    events.push_back({{"ph", "X"},
                      {"cat", "cpu_op"},
                      {"name", "aten::mm"},
                      {"ts", 1.5},
                      {"args", {{"In msg nelems", "not read: not a record_param_comms"}}}});
  }
  noisy["traceEvents"] = events;
  const trace::TorchImport sorted = trace::import_torch_traces(ddp_job(noisy));
  CHECK(sorted.trace == original.trace);
  CHECK(sorted.notes == original.notes);
  // As streams (the CLI's way), indented text: the same again.
  json rank1 = noisy;
  rank1["distributedInfo"]["rank"] = 1;
  const std::vector<std::string> texts = {noisy.dump(1), rank1.dump(1)};
  const trace::TorchImport streamed = trace::import_torch_trace_streams(
      2,
      [&](std::size_t i) {
        return trace::TorchTraceStream{"r" + std::to_string(i),
                                       std::make_unique<std::istringstream>(texts[i])};
      },
      {});
  CHECK(streamed.trace == original.trace);
}

TEST_CASE("torch import stream: the one-rank excerpt from a stream equals it from a string") {
  const std::string text = twinccl_test::torch_data_file("hta_ns_resolution_rank0.json");
  const trace::TorchImport from_text = trace::import_torch_traces({{"ns.json", text}});
  const trace::TorchImport from_stream = trace::import_torch_trace_streams(
      1,
      [&](std::size_t) {
        return trace::TorchTraceStream{"ns.json", std::make_unique<std::istringstream>(text)};
      },
      {});
  CHECK(from_stream.trace == from_text.trace);
  CHECK(from_stream.notes == from_text.notes);
  CHECK(from_text.trace.ranks[0].ops.size() == 35);  // 25 allreduce + 10 broadcast (SOURCES.md)
}

TEST_CASE("torch import stream: errors come in the order of a parse-then-read importer") {
  const std::string bad_event = R"({"name": "record_param_comms", "ts": 1, "args": {}})";
  // The top level before any event; JSON syntax and caps before anything.
  CHECK_THAT(error_of(R"({"traceEvents": [)" + bad_event + "]}"),
             Contains("bad.json: no 'distributedInfo' object"));
  CHECK_THAT(error_of(R"({"traceEvents": [)" + bad_event +
                      R"(], "distributedInfo": {"rank": 0, "world_size": 1})"),
             Contains("bad.json: not valid JSON"));
  CHECK_THAT(error_of(R"({"traceEvents": [)" + bad_event + ", " + bad_event +
                      R"(], "distributedInfo": {"rank": 0, "world_size": 1}})"),
             Contains("bad.json: traceEvents[0] (record_param_comms): no 'Collective name'"));
  // A repeated "traceEvents": the last one counts, as in a DOM.
  CHECK(error_of(R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [)" +
                 bad_event + R"(], "traceEvents": []})") == "no ConfigError");
  // An event's "name" or "cat" twice: refused (a skipped event cannot be taken back).
  CHECK_THAT(error_of(R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [
                 {"name": "aten::mm", "cat": "cpu_op", "name": "record_param_comms", "ts": 1}]})"),
             Contains("bad.json: traceEvents[0]: 'name' appears twice in the event"));
}

TEST_CASE("torch import stream: caps on bytes, values and nesting of a stream") {
  twinccl::JsonCaps limits{.max_depth = 4, .max_values = 1000, .max_bytes = 64};
  const twinccl::JsonRefuse refuse = [](const std::string& why) {
    throw twinccl::ConfigError("s: " + why);
  };
  auto read = [&](const std::string& text) {
    std::istringstream text_stream(text);
    std::istream& source = text_stream;
    std::size_t events = 0;
    try {
      trace::detail::stream_torch_json(
          source, limits, refuse, [] {}, [&](std::size_t, const json&) { ++events; });
    } catch (const twinccl::ConfigError& e) {
      return std::string(e.what());
    }
    return "read " + std::to_string(events) + " events";
  };
  CHECK(read(R"({"traceEvents": [{"name": "a"}, {"name": "b"}]})") == "read 2 events");
  CHECK_THAT(read(R"({"traceEvents": [)" + std::string(100, ' ') + "]}"),
             Contains("s: more than 64 bytes of JSON (the cap per file)"));
  CHECK_THAT(read(R"({"a": [[[[[1]]]]]})"), Contains("s: nesting deeper than 4 levels"));
  limits.max_values = 3;
  CHECK_THAT(read(R"({"traceEvents": [1, 2, 3, 4]})"), Contains("s: more than 3 JSON values"));
}

TEST_CASE("torch import stream: what is built of one event is capped, unread parts are not") {
  std::string zeros = "[0";
  for (int i = 0; i < (1 << 20); ++i) zeros += ",0";
  zeros += "]";
  // A field the importer reads, 2^20 + 1 values long: refused before it is built further.
  CHECK_THAT(
      error_of(R"({"distributedInfo": {"rank": 0, "world_size": 1}, "traceEvents": [
                 {"name": "record_param_comms", "ts": 1, "args": {"In split size": )" +
               zeros + "}}]}"),
      Contains("bad.json: traceEvents[0]: more than 1048576 JSON values in the fields read"));
  // The same values where nothing is read (distributedInfo's pg_config, an aten op's args): read.
  const std::string text = R"({"distributedInfo": {"rank": 0, "world_size": 1, "pg_config": )" +
                           zeros + R"(}, "traceEvents": [{"name": "aten::mm", "cat": "cpu_op",
                           "ts": 1, "args": {"Input Dims": )" +
                           zeros + "}}]}";
  const trace::TorchImport t = trace::import_torch_traces({{"big.json", text}});
  CHECK(t.trace.world_size() == 1);
  CHECK(t.trace.ranks[0].ops.empty());
}
