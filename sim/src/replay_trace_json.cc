// The trace file format (docs/traces.md) and check_trace.
//
// How it works. One JSON object; every rank lists its ops (kind, comm, seq, count, dtype, ...) and
// its events in program order: {"op": i} issues op i, {"wait": i} blocks on it, {"compute_s": x}
// and/or {"compute_flops": f} compute. The version is read first: another version is refused
// before anything else is looked at. Errors name the source and the JSON path
// ("t.json: ranks[3].ops[2].dtype: unknown data type 'foo'").
#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "twinccl/errors.h"
#include "twinccl/sim/replay_trace.h"

namespace twinccl::sim {
namespace {

using nlohmann::json;

[[noreturn]] void fail(std::string_view source, const std::string& path, const std::string& what) {
  throw ConfigError(std::string(source) + ": " + path + ": " + what);
}

const json& field(const json& obj, const char* key, std::string_view source, const std::string& path) {
  if (!obj.is_object()) fail(source, path, "must be an object");
  const auto it = obj.find(key);
  if (it == obj.end()) fail(source, path, std::string("missing field '") + key + "'");
  return *it;
}

template <class T>
T get(const json& v, std::string_view source, const std::string& path) {
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    fail(source, path, "has the wrong type (" + std::string(v.type_name()) + "): " + v.dump());
  }
}

template <class T>
T get_or(const json& obj, const char* key, T fallback, std::string_view source, const std::string& path) {
  const auto it = obj.find(key);
  return it == obj.end() ? fallback : get<T>(*it, source, path + "." + key);
}

json op_to_json(const TraceOp& op) {
  json j = {{"kind", std::string(name(op.kind))}, {"comm", op.comm}, {"seq", op.seq},
            {"count", op.count}, {"dtype", std::string(name(op.dtype))}};
  if (op.root >= 0) j["root"] = op.root;
  if (op.peer >= 0) j["peer"] = op.peer;
  if (!op.counts.empty()) j["counts"] = op.counts;
  if (!op.algorithm.empty()) j["algorithm"] = op.algorithm;
  if (op.async) j["async"] = true;
  if (op.group > 0) j["group"] = op.group;
  if (op.issue_s >= 0.0) j["issue_s"] = op.issue_s;
  if (op.complete_s >= 0.0) j["complete_s"] = op.complete_s;
  return j;
}

TraceOp op_from_json(const json& j, std::string_view source, const std::string& path) {
  TraceOp op;
  const std::string kind = get<std::string>(field(j, "kind", source, path), source, path + ".kind");
  const std::string dtype = get<std::string>(field(j, "dtype", source, path), source, path + ".dtype");
  try {
    op.kind = parse_op_kind(kind);
  } catch (const InvalidArgument& e) {
    fail(source, path + ".kind", e.what());
  }
  try {
    op.dtype = parse_data_type(dtype);
  } catch (const InvalidArgument& e) {
    fail(source, path + ".dtype", e.what());
  }
  op.comm = get<int>(field(j, "comm", source, path), source, path + ".comm");
  op.seq = get<std::uint64_t>(field(j, "seq", source, path), source, path + ".seq");
  op.count = get<std::size_t>(field(j, "count", source, path), source, path + ".count");
  op.root = get_or<int>(j, "root", -1, source, path);
  op.peer = get_or<int>(j, "peer", -1, source, path);
  op.counts = get_or<std::vector<std::size_t>>(j, "counts", {}, source, path);
  op.algorithm = get_or<std::string>(j, "algorithm", "", source, path);
  op.async = get_or<bool>(j, "async", false, source, path);
  op.group = get_or<int>(j, "group", 0, source, path);
  op.issue_s = get_or<double>(j, "issue_s", -1.0, source, path);
  op.complete_s = get_or<double>(j, "complete_s", -1.0, source, path);
  return op;
}

json event_to_json(const TraceEvent& e) {
  switch (e.kind) {
    case TraceEventKind::op: return {{"op", e.op}};
    case TraceEventKind::wait: return {{"wait", e.op}};
    case TraceEventKind::compute: {
      json j = json::object();
      if (e.seconds != 0.0 || e.flops == 0.0) j["compute_s"] = e.seconds;
      if (e.flops != 0.0) j["compute_flops"] = e.flops;
      return j;
    }
  }
  return json::object();
}

TraceEvent event_from_json(const json& j, std::string_view source, const std::string& path) {
  if (!j.is_object()) fail(source, path, "must be an object");
  TraceEvent e;
  if (j.contains("op")) {
    e.kind = TraceEventKind::op;
    e.op = get<int>(j["op"], source, path + ".op");
  } else if (j.contains("wait")) {
    e.kind = TraceEventKind::wait;
    e.op = get<int>(j["wait"], source, path + ".wait");
  } else if (j.contains("compute_s") || j.contains("compute_flops")) {
    e.kind = TraceEventKind::compute;
    e.seconds = get_or<double>(j, "compute_s", 0.0, source, path);
    e.flops = get_or<double>(j, "compute_flops", 0.0, source, path);
  } else {
    fail(source, path, "an event needs 'op', 'wait', 'compute_s' or 'compute_flops': " + j.dump());
  }
  return e;
}

std::string where(int rank, const char* what, std::size_t i) {
  return "ranks[" + std::to_string(rank) + "]." + what + "[" + std::to_string(i) + "]";
}

}  // namespace

void check_trace(const Trace& trace, std::string_view source) {
  if (trace.version != kTraceFormatVersion) {
    fail(source, "version", "is " + std::to_string(trace.version) + "; this TwinCCL reads version " +
                                std::to_string(kTraceFormatVersion));
  }
  const int n = trace.world_size();
  for (std::size_t c = 0; c < trace.communicators.size(); ++c) {
    const TraceCommunicator& comm = trace.communicators[c];
    const std::string path = "communicators[" + std::to_string(c) + "] '" + comm.name + "'";
    if (comm.ranks.empty()) fail(source, path, "has no ranks");
    std::vector<char> seen(static_cast<std::size_t>(n), 0);
    for (int r : comm.ranks) {
      if (r < 0 || r >= n) {
        fail(source, path + ".ranks", "world rank " + std::to_string(r) + " is outside 0.." + std::to_string(n - 1));
      }
      if (seen[static_cast<std::size_t>(r)]++) fail(source, path + ".ranks", "lists rank " + std::to_string(r) + " twice");
    }
  }
  for (int r = 0; r < n; ++r) {
    const RankTrace& rt = trace.ranks[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < rt.ops.size(); ++i) {
      const TraceOp& op = rt.ops[i];
      const std::string path = where(r, "ops", i) + " (" + std::string(name(op.kind)) + ")";
      if (op.comm < 0 || static_cast<std::size_t>(op.comm) >= trace.communicators.size()) {
        fail(source, path + ".comm", std::to_string(op.comm) + " is not a communicator index (0.." +
                                         std::to_string(static_cast<int>(trace.communicators.size()) - 1) + ")");
      }
      const std::vector<int>& members = trace.communicators[static_cast<std::size_t>(op.comm)].ranks;
      const int size = static_cast<int>(members.size());
      if (std::find(members.begin(), members.end(), r) == members.end()) {
        fail(source, path + ".comm", "rank " + std::to_string(r) + " is not a member of '" +
                                         trace.communicators[static_cast<std::size_t>(op.comm)].name + "'");
      }
      if (is_p2p(op.kind) && (op.peer < 0 || op.peer >= size)) {
        fail(source, path + ".peer", std::to_string(op.peer) + " is outside 0.." + std::to_string(size - 1));
      }
      if (is_rooted(op.kind) && (op.root < 0 || op.root >= size)) {
        fail(source, path + ".root", std::to_string(op.root) + " is outside 0.." + std::to_string(size - 1));
      }
    }
    for (std::size_t i = 0; i < rt.events.size(); ++i) {
      const TraceEvent& e = rt.events[i];
      if (e.kind == TraceEventKind::compute) {
        if (!(e.seconds >= 0.0) || !(e.flops >= 0.0)) {
          fail(source, where(r, "events", i), "compute must be >= 0 (seconds " + std::to_string(e.seconds) +
                                                  ", flops " + std::to_string(e.flops) + ")");
        }
      } else if (e.op < 0 || static_cast<std::size_t>(e.op) >= rt.ops.size()) {
        fail(source, where(r, "events", i), "op " + std::to_string(e.op) + " is outside 0.." +
                                                std::to_string(static_cast<int>(rt.ops.size()) - 1));
      }
    }
  }
}

std::string to_json(const Trace& trace) {
  json comms = json::array();
  for (const TraceCommunicator& c : trace.communicators) comms.push_back({{"name", c.name}, {"ranks", c.ranks}});
  json ranks = json::array();
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    json ops = json::array(), events = json::array();
    for (const TraceOp& op : trace.ranks[r].ops) ops.push_back(op_to_json(op));
    for (const TraceEvent& e : trace.ranks[r].events) events.push_back(event_to_json(e));
    ranks.push_back({{"rank", r}, {"ops", std::move(ops)}, {"events", std::move(events)}});
  }
  const json doc = {{"format", "twinccl-trace"},  {"version", trace.version},
                    {"program", trace.program},   {"world_size", trace.world_size()},
                    {"communicators", std::move(comms)}, {"ranks", std::move(ranks)}};
  return doc.dump() + "\n";
}

Trace trace_from_json(std::string_view text, std::string_view source) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(source, "(file)", std::string("is not JSON: ") + e.what());
  }
  if (!doc.is_object()) fail(source, "(top)", "must be a JSON object");
  if (doc.value("format", std::string()) != "twinccl-trace") {
    fail(source, "format", "must be \"twinccl-trace\" (is this a TwinCCL trace file?)");
  }
  Trace trace;
  trace.version = get<int>(field(doc, "version", source, "(top)"), source, "version");
  if (trace.version != kTraceFormatVersion) {
    fail(source, "version", "is " + std::to_string(trace.version) + "; this TwinCCL reads version " +
                                std::to_string(kTraceFormatVersion) + " (re-record the trace)");
  }
  trace.program = get_or<std::string>(doc, "program", "", source, "(top)");
  const int world = get<int>(field(doc, "world_size", source, "(top)"), source, "world_size");
  if (world < 1) fail(source, "world_size", "must be >= 1, got " + std::to_string(world));
  const json& comms = field(doc, "communicators", source, "(top)");
  if (!comms.is_array()) fail(source, "communicators", "must be an array");
  for (std::size_t c = 0; c < comms.size(); ++c) {
    const std::string path = "communicators[" + std::to_string(c) + "]";
    trace.communicators.push_back(
        {get<std::string>(field(comms[c], "name", source, path), source, path + ".name"),
         get<std::vector<int>>(field(comms[c], "ranks", source, path), source, path + ".ranks")});
  }
  const json& ranks = field(doc, "ranks", source, "(top)");
  if (!ranks.is_array() || ranks.size() != static_cast<std::size_t>(world)) {
    fail(source, "ranks", "must be an array of world_size=" + std::to_string(world) + " entries");
  }
  trace.ranks.resize(static_cast<std::size_t>(world));
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::string path = "ranks[" + std::to_string(r) + "]";
    const json& ops = field(ranks[r], "ops", source, path);
    const json& events = field(ranks[r], "events", source, path);
    if (!ops.is_array() || !events.is_array()) fail(source, path, "'ops' and 'events' must be arrays");
    RankTrace& rt = trace.ranks[r];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      rt.ops.push_back(op_from_json(ops[i], source, path + ".ops[" + std::to_string(i) + "]"));
    }
    for (std::size_t i = 0; i < events.size(); ++i) {
      rt.events.push_back(event_from_json(events[i], source, path + ".events[" + std::to_string(i) + "]"));
    }
  }
  check_trace(trace, source);
  return trace;
}

Trace load_trace(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot open trace file '" + path.string() + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return trace_from_json(text.str(), path.string());
}

void save_trace(const Trace& trace, const std::filesystem::path& path) {
  std::ofstream out(path);
  if (!out) throw ConfigError("cannot write trace file '" + path.string() + "'");
  out << to_json(trace);
  if (!out) throw ConfigError("writing trace file '" + path.string() + "' failed");
}

}  // namespace twinccl::sim
