// The trace file format (docs/traces.md): reading and writing; what a replay needs beyond the
// file's shape is sim::check_trace's (sim/src/trace_check.cc).
//
// How it works. One JSON object; every rank lists its ops (kind, comm, seq, count, dtype, ...) and
// its events in program order: {"op": i} issues op i, {"wait": i} blocks on it, {"compute_s": x}
// and/or {"compute_flops": f} compute. The bounded reader (twinccl/bounded_json.h) refuses nesting
// deeper than a trace has and more values than the caps allow while the file is read, so a hostile
// file is refused before it takes memory; every field is read with its exact type and range (2^40
// is not silently cut to an int). The version is read first: another version is refused before
// anything else is looked at. Errors name the source and the JSON path ("t.json:
// ranks[3].ops[2].dtype: unknown data type 'foo'") and never echo more than a few bytes of input.
#include "twinccl/trace/trace_file.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "json_fields.h"
#include "twinccl/bounded_json.h"
#include "twinccl/errors.h"
#include "twinccl/input_file.h"
#include "twinccl/output_file.h"
#include "twinccl/utf8_text.h"

namespace twinccl::trace {
namespace {

using detail::fail;
using detail::finite;
using detail::member;
using detail::shown;
using detail::text;
using detail::whole;

using nlohmann::json;

// Deepest nesting a trace has is 6 (top, ranks, rank, ops, op, counts); more is not a trace.
constexpr int kMaxDepth = 16;
// JSON values a trace within the caps holds at most (an op ~14, an event 2 or 3, a member 1).
constexpr std::size_t kMaxValues = 16 * kMaxTraceOps + 3 * kMaxTraceEvents + kMaxTraceCommMembers;

// A path as an error shows it: its first 256 bytes (a path can be as long as the command line).
std::string shown_path(const std::filesystem::path& path) {
  const std::string text = path.string();
  if (text.size() <= 256) return text;
  return cut_utf8(text, 256) + "... (" + std::to_string(text.size()) + " bytes)";
}

const json& field(const json& obj, const char* key, std::string_view source,
                  const std::string& path) {
  if (!obj.is_object()) fail(source, path, "must be an object, is " + shown(obj));
  const auto it = obj.find(key);
  if (it == obj.end()) fail(source, path, std::string("missing field '") + key + "'");
  return *it;
}

bool get_bool(const json& v, std::string_view source, const std::string& path) {
  if (!v.is_boolean()) fail(source, path, "must be true or false, is " + shown(v));
  return v.get<bool>();
}

const json& array(const json& v, std::string_view source, const std::string& path,
                  std::size_t cap) {
  if (!v.is_array()) fail(source, path, "must be an array, is " + shown(v));
  if (v.size() > cap)
    fail(source, path,
         "has " + std::to_string(v.size()) + " entries; the cap is " + std::to_string(cap));
  return v;
}

json op_to_json(const TraceOp& op) {
  json j = {{"kind", std::string(name(op.kind))},
            {"comm", op.comm},
            {"seq", op.seq},
            {"count", op.count},
            {"dtype", std::string(name(op.dtype))}};
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
  const std::string kind =
      text(field(j, "kind", source, path), source, path + ".kind", kMaxTraceNameBytes);
  const std::string dtype =
      text(field(j, "dtype", source, path), source, path + ".dtype", kMaxTraceNameBytes);
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
  op.comm = whole<int>(field(j, "comm", source, path), source, path + ".comm");
  op.seq = whole<std::uint64_t>(field(j, "seq", source, path), source, path + ".seq");
  op.count = whole<std::size_t>(field(j, "count", source, path), source, path + ".count");
  if (const json* v = member(j, "root")) op.root = whole<int>(*v, source, path + ".root");
  if (const json* v = member(j, "peer")) op.peer = whole<int>(*v, source, path + ".peer");
  if (const json* v = member(j, "counts")) {
    const json& counts =
        array(*v, source, path + ".counts", static_cast<std::size_t>(kMaxTraceRanks));
    for (std::size_t i = 0; i < counts.size(); ++i) {
      op.counts.push_back(
          whole<std::size_t>(counts[i], source, path + ".counts[" + std::to_string(i) + "]"));
    }
  }
  if (const json* v = member(j, "algorithm"))
    op.algorithm = text(*v, source, path + ".algorithm", kMaxTraceNameBytes);
  if (const json* v = member(j, "async")) op.async = get_bool(*v, source, path + ".async");
  if (const json* v = member(j, "group")) op.group = whole<int>(*v, source, path + ".group", 0);
  if (const json* v = member(j, "issue_s")) op.issue_s = finite(*v, source, path + ".issue_s");
  if (const json* v = member(j, "complete_s"))
    op.complete_s = finite(*v, source, path + ".complete_s");
  return op;
}

json event_to_json(const TraceEvent& e) {
  switch (e.kind) {
    case TraceEventKind::op:
      return {{"op", e.op}};
    case TraceEventKind::wait:
      return {{"wait", e.op}};
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
  if (!j.is_object()) fail(source, path, "must be an object, is " + shown(j));
  TraceEvent e;
  if (const json* v = member(j, "op")) {
    e.kind = TraceEventKind::op;
    e.op = whole<int>(*v, source, path + ".op");
  } else if (const json* w = member(j, "wait")) {
    e.kind = TraceEventKind::wait;
    e.op = whole<int>(*w, source, path + ".wait");
  } else if (j.contains("compute_s") || j.contains("compute_flops")) {
    e.kind = TraceEventKind::compute;
    if (const json* s = member(j, "compute_s")) e.seconds = finite(*s, source, path + ".compute_s");
    if (const json* f = member(j, "compute_flops"))
      e.flops = finite(*f, source, path + ".compute_flops");
  } else {
    fail(source, path, "an event needs 'op', 'wait', 'compute_s' or 'compute_flops'");
  }
  return e;
}

// A text or a stream, refused while parsing past the caps.
template <class Input>
json parse_bounded(Input&& input, std::string_view source) {
  const JsonCaps caps{.max_depth = kMaxDepth,
                      .max_values = kMaxValues,
                      .max_bytes = kMaxTraceFileBytes,
                      .over_bytes_advice = "; replay a shorter window"};
  return parse_bounded_json(input, caps, [&](const std::string& why) {
    fail(source, "(file)",
         why + " (a trace within the caps has at most " + std::to_string(kMaxTraceOps) +
             " operations and " + std::to_string(kMaxTraceEvents) + " events)");
  });
}

}  // namespace

std::string to_json(const Trace& trace) {
  json comms = json::array();
  for (const TraceCommunicator& c : trace.communicators)
    comms.push_back({{"name", c.name}, {"ranks", c.ranks}});
  json ranks = json::array();
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    json ops = json::array(), events = json::array();
    for (const TraceOp& op : trace.ranks[r].ops) ops.push_back(op_to_json(op));
    for (const TraceEvent& e : trace.ranks[r].events) events.push_back(event_to_json(e));
    ranks.push_back({{"rank", r}, {"ops", std::move(ops)}, {"events", std::move(events)}});
  }
  json doc = {{"format", "twinccl-trace"},         {"version", trace.version},
              {"program", trace.program},          {"world_size", trace.world_size()},
              {"communicators", std::move(comms)}, {"ranks", std::move(ranks)}};
  if (trace.p2p_per_peer_streams) doc["p2p_streams"] = "per_peer";  // absent: per communicator
  return json_dump(std::move(doc)) + "\n";
}

namespace {

Trace from_document(const json& doc, std::string_view source) {
  if (!doc.is_object()) fail(source, "(top)", "must be a JSON object, is " + shown(doc));
  const json* format = member(doc, "format");
  if (format == nullptr || !format->is_string() ||
      format->get_ref<const std::string&>() != "twinccl-trace") {
    fail(source, "format", "must be \"twinccl-trace\" (is this a TwinCCL trace file?)");
  }
  Trace trace;
  trace.version = whole<int>(field(doc, "version", source, "(top)"), source, "version");
  if (trace.version != kTraceFormatVersion) {
    fail(source, "version",
         "is " + std::to_string(trace.version) + "; this TwinCCL reads version " +
             std::to_string(kTraceFormatVersion) + " (re-record the trace)");
  }
  if (const json* v = member(doc, "program"))
    trace.program = text(*v, source, "program", kMaxTraceProgramBytes);
  if (const json* v = member(doc, "p2p_streams")) {
    const std::string mode = text(*v, source, "p2p_streams", kMaxTraceNameBytes);
    if (mode != "per_peer" && mode != "per_comm")
      fail(source, "p2p_streams", "must be \"per_comm\" or \"per_peer\", is " + shown(*v));
    trace.p2p_per_peer_streams = mode == "per_peer";
  }
  const int world = whole<int>(field(doc, "world_size", source, "(top)"), source, "world_size", 1,
                               kMaxTraceRanks);
  const json& comms = array(field(doc, "communicators", source, "(top)"), source, "communicators",
                            kMaxTraceCommunicators);
  for (std::size_t c = 0; c < comms.size(); ++c) {
    const std::string path = "communicators[" + std::to_string(c) + "]";
    TraceCommunicator comm;
    comm.name =
        text(field(comms[c], "name", source, path), source, path + ".name", kMaxTraceNameBytes);
    const json& ranks = array(field(comms[c], "ranks", source, path), source, path + ".ranks",
                              static_cast<std::size_t>(world));
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      comm.ranks.push_back(
          whole<int>(ranks[i], source, path + ".ranks[" + std::to_string(i) + "]"));
    }
    trace.communicators.push_back(std::move(comm));
  }
  const json& ranks =
      array(field(doc, "ranks", source, "(top)"), source, "ranks", static_cast<std::size_t>(world));
  if (ranks.size() != static_cast<std::size_t>(world)) {
    fail(source, "ranks",
         "must be an array of world_size=" + std::to_string(world) + " entries, has " +
             std::to_string(ranks.size()));
  }
  trace.ranks.resize(static_cast<std::size_t>(world));
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::string path = "ranks[" + std::to_string(r) + "]";
    const json& ops =
        array(field(ranks[r], "ops", source, path), source, path + ".ops", kMaxTraceOps);
    const json& events =
        array(field(ranks[r], "events", source, path), source, path + ".events", kMaxTraceEvents);
    if (const json* v = member(ranks[r], "rank");
        v != nullptr && whole<int>(*v, source, path + ".rank") != static_cast<int>(r)) {
      fail(source, path + ".rank",
           "is " + shown(*v) + "; entries must be in rank order (this is rank " +
               std::to_string(r) + ")");
    }
    RankTrace& rt = trace.ranks[r];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      rt.ops.push_back(op_from_json(ops[i], source, path + ".ops[" + std::to_string(i) + "]"));
    }
    for (std::size_t i = 0; i < events.size(); ++i) {
      rt.events.push_back(
          event_from_json(events[i], source, path + ".events[" + std::to_string(i) + "]"));
    }
  }
  return trace;
}

}  // namespace

Trace from_json(std::string_view text, std::string_view source) {
  return from_document(parse_bounded(text, source), source);
}

Trace load(const std::filesystem::path& path) {
  return from_document(parse_bounded(open_input_file("trace file", path), shown_path(path)),
                       shown_path(path));  // streamed
}

void save(const Trace& trace, const std::filesystem::path& path) {
  // Checked, then written to a temporary file beside the path and renamed: never half-written.
  check_output_path("trace file", path.string());
  const std::string text = to_json(trace);
  write_output_file("trace file", path.string(), [&](std::ostream& out) { out << text; });
}

}  // namespace twinccl::trace
