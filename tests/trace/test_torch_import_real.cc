// The PyTorch trace importer on real profiler traces (tests/trace/data/SOURCES.md): what it takes
// over is checked against the file itself, read here independently of the importer.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "torch_trace_builder.h"
#include "twinccl/sim/replay_trace.h"
#include "twinccl/trace/torch_import.h"

namespace {

using namespace twinccl;

// The DDP run's rank 0 (HTA's nccl_data) and, for its 2-rank world, the same file as rank 1
// (DDP ranks issue the same collectives; SOURCES.md says so).
std::vector<trace::TorchTraceText> ddp_job() {
  const std::string rank0 = twinccl_test::torch_data_file("hta_nccl_data_rank0.json");
  std::string rank1 = rank0;
  const std::string from = "\"rank\": 0, \"world_size\": 2";
  const std::size_t at = rank1.find(from);
  REQUIRE(at != std::string::npos);
  rank1.replace(at, from.size(), "\"rank\": 1, \"world_size\": 2");
  return {{"hta_nccl_data_rank0.json", rank0}, {"rank1.json", rank1}};
}

// The file's record_param_comms calls that are operations, in CPU order, as the file says them.
std::vector<nlohmann::json> calls_in(const std::string& text) {
  const nlohmann::json doc = nlohmann::json::parse(text);
  std::vector<nlohmann::json> calls;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e.value("name", "") == "record_param_comms" && e["args"]["Collective name"] != "wait")
      calls.push_back(e);
  }
  std::stable_sort(calls.begin(), calls.end(),
                   [](const nlohmann::json& a, const nlohmann::json& b) {
                     return a["ts"].get<double>() < b["ts"].get<double>();
                   });
  return calls;
}

}  // namespace

TEST_CASE("torch import: a real DDP trace keeps every collective's kind, count and dtype") {
  const std::vector<trace::TorchTraceText> job = ddp_job();
  const trace::TorchImport imported = trace::import_torch_traces(job);
  const trace::Trace& t = imported.trace;
  REQUIRE(t.world_size() == 2);
  REQUIRE(t.communicators.size() == 1);
  CHECK(t.communicators[0].name == "default_pg");  // "Process Group Description"
  CHECK(t.communicators[0].ranks == std::vector<int>{0, 1});
  const std::vector<nlohmann::json> calls = calls_in(job[0].text);
  REQUIRE(calls.size() == 21);  // 15 allreduce + 6 broadcast; 6 Work.wait() records are not ops
  const std::map<std::string, OpKind> kinds = {{"allreduce", OpKind::all_reduce},
                                               {"broadcast", OpKind::broadcast}};
  const std::map<std::string, DataType> dtypes = {{"Float", DataType::float32},
                                                  {"Long", DataType::int64}};
  for (int r = 0; r < 2; ++r) {
    const trace::RankTrace& rt = t.ranks[static_cast<std::size_t>(r)];
    REQUIRE(rt.ops.size() == calls.size());
    for (std::size_t i = 0; i < calls.size(); ++i) {
      const nlohmann::json& args = calls[i]["args"];
      INFO("rank " << r << " op " << i);
      CHECK(rt.ops[i].kind == kinds.at(args["Collective name"].get<std::string>()));
      CHECK(rt.ops[i].count == args["In msg nelems"].get<std::size_t>());
      CHECK(rt.ops[i].dtype == dtypes.at(args["dtype"].get<std::string>()));
      CHECK(rt.ops[i].seq == i);
      CHECK(rt.ops[i].async);  // every NCCL kernel ran on stream 40, compute on stream 7
    }
  }
  sim::check_trace(t, "imported");  // the replay's own checks (order, counterparts, no deadlock)
}

TEST_CASE("torch import: compute that overlapped an all_reduce stays between its issue and wait") {
  const trace::Trace t = trace::import_torch_traces(ddp_job()).trace;
  const trace::RankTrace& rt = t.ranks[0];
  std::vector<int> issued(rt.ops.size(), 0), waited(rt.ops.size(), 0);
  bool overlapped = false;
  double compute_s = 0;
  std::vector<int> open;
  for (const trace::TraceEvent& e : rt.events) {
    if (e.kind == trace::TraceEventKind::op) {
      ++issued[static_cast<std::size_t>(e.op)];
      open.push_back(e.op);
    } else if (e.kind == trace::TraceEventKind::wait) {
      ++waited[static_cast<std::size_t>(e.op)];
      open.erase(std::find(open.begin(), open.end(), e.op));
    } else {
      compute_s += e.seconds;
      if (!open.empty()) overlapped = true;  // DDP's backward runs beside its all_reduces
    }
  }
  CHECK(std::all_of(issued.begin(), issued.end(), [](int n) { return n == 1; }));
  CHECK(std::all_of(waited.begin(), waited.end(), [](int n) { return n == 1; }));
  CHECK(overlapped);
  // Compute is busy time of the compute stream, never more than its kernels' total.
  const nlohmann::json doc = nlohmann::json::parse(ddp_job()[0].text);
  double kernels_s = 0;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    if ((cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") &&
        e["name"].get<std::string>().rfind("nccl", 0) != 0)
      kernels_s += e["dur"].get<double>() * 1e-6;
  }
  CHECK(compute_s > 0);
  CHECK(compute_s <= kernels_s + 1e-6);  // timestamps near 4e12 us round to ~1e-3 us
}

TEST_CASE("torch import: a one-rank trace with Process Group ID and no NCCL kernels") {
  const std::string text = twinccl_test::torch_data_file("hta_ns_resolution_rank0.json");
  const trace::TorchImport imported =
      trace::import_torch_traces({{"hta_ns_resolution_rank0.json", text}});
  const trace::Trace& t = imported.trace;
  REQUIRE(t.world_size() == 1);
  REQUIRE(t.communicators.size() == 1);
  CHECK(t.communicators[0].name == "pg 0");  // "Process Group ID": 0, no name or description
  CHECK(t.communicators[0].ranks == std::vector<int>{0});
  const std::vector<nlohmann::json> calls = calls_in(text);
  REQUIRE(t.ranks[0].ops.size() == calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i)
    CHECK(t.ranks[0].ops[i].count == calls[i]["args"]["In msg nelems"].get<std::size_t>());
  // No kernel to time them: each op is issued and waited at its CPU call, compute around it.
  const std::vector<trace::TraceEvent>& ev = t.ranks[0].events;
  for (std::size_t i = 0; i + 1 < ev.size(); ++i) {
    if (ev[i].kind == trace::TraceEventKind::op) {
      CHECK(ev[i + 1].kind == trace::TraceEventKind::wait);
      CHECK(ev[i + 1].op == ev[i].op);
      CHECK_FALSE(t.ranks[0].ops[static_cast<std::size_t>(ev[i].op)].async);
    }
  }
  CHECK(std::any_of(imported.notes.begin(), imported.notes.end(),
                    [](const std::string& n) { return n.find("no NCCL kernel") != n.npos; }));
  sim::check_trace(t, "imported");
}
