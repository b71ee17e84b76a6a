// Chrome/Perfetto trace JSON of a flow run, and the busiest links.
//
// Format (Trace Event Format, "JSON Object"): {"traceEvents": [...], "displayTimeUnit": "ns",
// "otherData": {...}}. One process (pid 0) named after the run; one thread per rank (tid = rank,
// named "rank R", sorted by rank); per transfer a complete event ("ph": "X", "ts"/"dur" in us)
// "send->DST" on the sender's track and "recv<-SRC" on the receiver's, args {bytes, peer, step}.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "twinccl/sim/flow_report.h"
#include "twinccl/utf8_text.h"

namespace twinccl::sim {

std::vector<LinkLoad> busiest_links(const FlowReport& report, std::size_t count) {
  std::vector<LinkLoad> out = report.links;  // already busiest first
  if (out.size() > count) out.resize(count);
  return out;
}

void write_trace_json(const FlowReport& report, std::ostream& out) {
  using nlohmann::json;
  const Prediction& p = report.prediction;
  json events = json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 0},
                    {"args",
                     {{"name", p.algorithm + " " + std::string(name(p.protocol)) + ", " +
                                   std::to_string(p.nranks) + " ranks"}}}});
  std::set<int> ranks;
  for (const TransferRecord& t : report.transfers) {
    ranks.insert(t.src);
    ranks.insert(t.dst);
  }
  for (int r : ranks) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", r},
                      {"args", {{"name", "rank " + std::to_string(r)}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", r},
                      {"args", {{"sort_index", r}}}});
  }
  for (const TransferRecord& t : report.transfers) {
    const double dur = std::max(0.0, t.end_us - t.start_us);
    const json args = {{"bytes", t.bytes}, {"step", t.step}};
    json send = {{"name", "send->" + std::to_string(t.dst)},
                 {"cat", "transfer"},
                 {"ph", "X"},
                 {"pid", 0},
                 {"tid", t.src},
                 {"ts", t.start_us},
                 {"dur", dur},
                 {"args", args}};
    send["args"]["peer"] = t.dst;
    json recv = {{"name", "recv<-" + std::to_string(t.src)},
                 {"cat", "transfer"},
                 {"ph", "X"},
                 {"pid", 0},
                 {"tid", t.dst},
                 {"ts", t.start_us},
                 {"dur", dur},
                 {"args", args}};
    recv["args"]["peer"] = t.src;
    events.push_back(std::move(send));
    events.push_back(std::move(recv));
  }
  const json doc = {{"traceEvents", std::move(events)},
                    {"displayTimeUnit", "ns"},
                    {"otherData",
                     {{"algorithm", p.algorithm},
                      {"protocol", std::string(name(p.protocol))},
                      {"nranks", p.nranks},
                      {"time_us", p.time_us},
                      {"busbw_gbps", p.busbw_gbps},
                      {"truncated", report.transfers_truncated}}}};
  out << json_dump(std::move(doc)) << '\n';
}

}  // namespace twinccl::sim
