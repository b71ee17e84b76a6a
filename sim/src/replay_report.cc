// What people read of a replay: the text summary and the Perfetto timeline.
//
// Summary: total time; per rank end/compute/comm/exposed/overlap (every rank up to 16, else
// min/mean/max); operations grouped by (communicator, kind, algorithm, bytes) with count, mean and
// max time; the busiest links. Perfetto (Trace Event Format): process = rank, threads "compute",
// "wait" and "comm NAME"; complete events ("ph": "X") with ts/dur in microseconds.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "twinccl/sim/replay.h"
#include "twinccl/utf8_text.h"

namespace twinccl::sim {
namespace {

std::string rank_line(const std::string& who, const ReplayRank& r) {
  const double overlap = r.comm_us > 0.0 ? 100.0 * r.overlapped_us / r.comm_us : 0.0;
  return fmt::format("  {:<8} {:>12.1f} {:>12.1f} {:>12.1f} {:>12.1f} {:>9.1f}%\n", who, r.end_us,
                     r.compute_us, r.comm_us, r.exposed_comm_us, overlap);
}

}  // namespace

std::string summarize_replay(const ReplayResult& result, std::size_t top_links) {
  std::string out =
      fmt::format("simulated on '{}'{}: {:.1f} us ({} ranks, {} operations)\n", result.topology,
                  result.program.empty() ? "" : " for " + result.program, result.total_us,
                  result.ranks.size(), result.ops.size());
  out += fmt::format(
      "  overlap: {:.1f}% of communication hidden behind compute; exposed communication {:.1f} us "
      "per rank (mean)\n",
      100.0 * result.overlap_fraction(), result.mean_exposed_comm_us());
  out += fmt::format("  {:<8} {:>12} {:>12} {:>12} {:>12} {:>10}\n", "rank", "end_us", "compute_us",
                     "comm_us", "exposed_us", "overlap");
  if (result.ranks.size() <= 16) {
    for (std::size_t r = 0; r < result.ranks.size(); ++r)
      out += rank_line(std::to_string(r), result.ranks[r]);
  } else if (!result.ranks.empty()) {
    ReplayRank lo = result.ranks.front(), hi = lo, mean{};
    for (const ReplayRank& r : result.ranks) {
      for (auto field : {&ReplayRank::end_us, &ReplayRank::compute_us, &ReplayRank::comm_us,
                         &ReplayRank::exposed_comm_us, &ReplayRank::overlapped_us}) {
        lo.*field = std::min(lo.*field, r.*field);
        hi.*field = std::max(hi.*field, r.*field);
        mean.*field += r.*field / static_cast<double>(result.ranks.size());
      }
    }
    out += rank_line("min", lo) + rank_line("mean", mean) + rank_line("max", hi);
  }
  // Operations grouped.
  struct Group {
    int count = 0;
    double total_us = 0.0, max_us = 0.0;
  };
  std::map<std::tuple<std::string, std::string, std::string, double>, Group> groups;
  for (const ReplayOp& op : result.ops) {
    Group& g = groups[{op.comm, std::string(name(op.kind)),
                       op.algorithm + (op.bulk ? " (bulk)" : ""), op.bytes}];
    ++g.count;
    g.total_us += op.time_us();
    g.max_us = std::max(g.max_us, op.time_us());
  }
  out += fmt::format("  {:<16} {:<16} {:<14} {:>14} {:>6} {:>12} {:>12}\n", "comm", "operation",
                     "algorithm", "bytes", "count", "mean_us", "max_us");
  for (const auto& [key, g] : groups) {
    const auto& [comm, kind, algo, bytes] = key;
    out += fmt::format("  {:<16} {:<16} {:<14} {:>14.0f} {:>6} {:>12.1f} {:>12.1f}\n", comm, kind,
                       algo, bytes, g.count, g.total_us / g.count, g.max_us);
  }
  if (top_links > 0 && !result.links.empty()) {
    out += "  busiest links (busy time at full rate / total time):\n";
    for (std::size_t i = 0; i < std::min(top_links, result.links.size()); ++i) {
      const LinkLoad& l = result.links[i];
      out += fmt::format("    {:<40} {:>14.0f} bytes {:>12.1f} us {:>6.1f}%\n", l.name, l.bytes,
                         l.busy_us, 100.0 * l.utilisation);
    }
  }
  return out;
}

std::string summarize_replay(const Trace& trace, const topo::Topology& topology,
                             const ReplayOptions& options) {
  return summarize_replay(replay(trace, topology, options));
}

void write_replay_perfetto(const ReplayResult& result, std::ostream& out) {
  using nlohmann::json;
  json events = json::array();
  std::map<std::pair<int, std::string>, int> tids;  // (rank, track) -> tid
  std::set<int> ranks;
  for (const ReplaySlice& s : result.timeline) {
    ranks.insert(s.rank);
    auto [it, fresh] = tids.try_emplace({s.rank, s.track}, 0);
    if (fresh) {
      it->second = s.track == "compute" ? 0
                   : s.track == "wait"  ? 1
                                        : 2 + static_cast<int>(tids.size());
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", s.rank},
                        {"tid", it->second},
                        {"args", {{"name", s.track}}}});
    }
  }
  for (int r : ranks) {
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", r},
                      {"args", {{"name", "rank " + std::to_string(r)}}}});
    events.push_back(
        {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", r}, {"args", {{"sort_index", r}}}});
  }
  for (const ReplaySlice& s : result.timeline) {
    events.push_back({{"name", s.name},
                      {"cat", s.track},
                      {"ph", "X"},
                      {"pid", s.rank},
                      {"tid", tids.at({s.rank, s.track})},
                      {"ts", s.start_us},
                      {"dur", std::max(0.0, s.end_us - s.start_us)}});
  }
  json links = json::array();
  for (std::size_t i = 0; i < std::min<std::size_t>(10, result.links.size()); ++i) {
    links.push_back({{"name", result.links[i].name}, {"utilisation", result.links[i].utilisation}});
  }
  const json doc = {{"traceEvents", std::move(events)},
                    {"displayTimeUnit", "ns"},
                    {"otherData",
                     {{"topology", result.topology},
                      {"program", result.program},
                      {"total_us", result.total_us},
                      {"overlap_fraction", result.overlap_fraction()},
                      {"busiest_links", std::move(links)}}}};
  out << json_dump(doc) << '\n';
}

}  // namespace twinccl::sim
