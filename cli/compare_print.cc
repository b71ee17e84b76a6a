// `twinccl compare` output: the nccl-tests-style table (as `twinccl perf`), CSV and JSON.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>

#include "compare_report.h"
#include "flag_values.h"
#include "twinccl/call_site_text.h"
#include "twinccl/utf8_text.h"

namespace twinccl::cli {
namespace {

std::string percent(double ratio) { return fmt::format("{:+.1f}%", 100.0 * (ratio - 1.0)); }

std::string title_of(const sim::NcclTestsTable& log) {
  return fmt::format(
      "{}: {} (from the {}), {} ranks on {} node(s), {}{}; {}", log.source, log.collective,
      log.collective_from, log.ranks, log.nodes, name(log.dtype),
      log.nccl_version.empty() ? "" : ", " + log.nccl_version_library + " " + log.nccl_version,
      log.gpus_per_thread > 1
          ? fmt::format("{} GPUs per host thread (-g {})", log.gpus_per_thread, log.gpus_per_thread)
      : log.gpus_per_thread == 1 ? std::string("one GPU per host thread")
                                 : std::string("one GPU per host thread assumed (no nGpus line)"));
}

// The run's NCCL_ALGO / NCCL_PROTO the rows were predicted with: the log's, or --algo / --proto's
// where given (their "from" says what they replaced); then twinccl's exact names forced.
std::string table_title(const CompareTable& t) {
  const sim::NcclTestsTable& log = t.log;
  std::string env;
  if (!log.nccl_algo.empty())
    env += fmt::format("; NCCL_ALGO={} ({})", shown_value(log.nccl_algo, 120), log.nccl_algo_from);
  if (!log.nccl_proto.empty())
    env +=
        fmt::format("; NCCL_PROTO={} ({})", shown_value(log.nccl_proto, 120), log.nccl_proto_from);
  if (!t.forced_algorithm.empty()) env += fmt::format("; forced {} (--algo)", t.forced_algorithm);
  if (!t.forced_protocol.empty()) env += fmt::format("; forced {} (--proto)", t.forced_protocol);
  return title_of(log) + env;
}

// "16, 17, 30" (at most 10, then "...").
std::string skipped_lines(const CompareTable& t) {
  std::string lines;
  for (std::size_t i = 0; i < t.skipped.size() && i < 10; ++i)
    lines += fmt::format("{}{}", i == 0 ? "" : ", ", t.skipped[i].line);
  return t.skipped.size() > 10 ? lines + ", ..." : lines;
}

}  // namespace

void print_compare_warnings(std::ostream& err, const CompareReport& report, std::size_t max_lines) {
  for (const CompareTable& t : report.tables) {
    for (std::size_t i = 0; i < t.skipped.size() && i < max_lines; ++i) {
      err << fmt::format("twinccl: warning: {}:{}: not compared: {}\n", t.log.source,
                         t.skipped[i].line, t.skipped[i].why);
    }
    if (t.skipped.size() > max_lines) {
      err << fmt::format("twinccl: warning: {}: and {} more row(s) not compared\n", t.log.source,
                         t.skipped.size() - max_lines);
    }
  }
}

void print_compare_table(std::ostream& out, const CompareReport& report) {
  out << fmt::format(
      "# twinccl compare: nccl-tests measurements vs the simulator's {} prediction on {}\n",
      report.fidelity, report.topology);
  out << fmt::format(
      "# measured: the {} columns; error = predicted / measured time - 1 (-30% = predicted 30% "
      "faster)\n",
      report.in_place ? "in-place" : "out-of-place");
  if (!report.restriction.empty()) out << "# note: " << report.restriction << "\n";
  for (const CompareTable& t : report.tables) {
    out << "#\n# " << table_title(t) << "\n";
    if (!t.nccl_version_note.empty()) out << "# note: " << t.nccl_version_note << "\n";
    for (const std::string& n : t.notes) out << "# note: " << n << "\n";
    out << fmt::format(
        "# {:>12} {:>12} {:>9} {:>6} {:>5}   {:>9} {:>8}   {:>9} {:>8}  {:<20} {:>8}\n", "", "", "",
        "", "", "measured", "", "predicted", "", "", "");
    out << fmt::format(
        "# {:>12} {:>12} {:>9} {:>6} {:>5}   {:>9} {:>8}   {:>9} {:>8}  {:<20} {:>8}\n", "size",
        "count", "type", "redop", "root", "time", "busbw", "time", "busbw", "algorithm/protocol",
        "error");
    out << fmt::format(
        "# {:>12} {:>12} {:>9} {:>6} {:>5}   {:>9} {:>8}   {:>9} {:>8}  {:<20} {:>8}\n", "(B)",
        "(elements)", "", "", "", "(us)", "(GB/s)", "(us)", "(GB/s)", "", "");
    for (const CompareRow& r : t.rows) {
      const sim::NcclTestsRow& m = r.measured_row;
      out << fmt::format(
          "  {:>12} {:>12} {:>9} {:>6} {:>5}   {:>9.2f} {:>8.2f}   {:>9.2f} {:>8.2f}  {:<20} "
          "{:>8}\n",
          m.size_bytes, m.count, name(m.dtype), m.redop.empty() ? "-" : m.redop, m.root,
          r.measured_time_us, r.measured_busbw_gbps, r.predicted_time_us, r.predicted_busbw_gbps,
          r.algorithm + "/" + r.protocol, percent(r.ratio));
    }
    if (!t.skipped.empty()) {
      out << fmt::format("# {} row(s) not compared (lines {}): see the warnings on stderr\n",
                         t.skipped.size(), skipped_lines(t));
    }
  }
  out << "#\n# geometric mean per size regime (latency: < 1 MiB; middle; bandwidth: >= 64 MiB)\n";
  out << "#   error: of predicted / measured (bias); spread: of max(r, 1/r), how far off a row "
         "typically is\n";
  const auto file_name = [](const std::string& source) {
    const std::size_t slash = source.find_last_of('/');
    return slash == std::string::npos ? source : source.substr(slash + 1);
  };
  // The log column is as wide as its longest name (at least 48), so the columns stay aligned.
  std::size_t log_width = 48;
  for (const RegimeSummary& s : report.summary)
    log_width = std::max(log_width, file_name(s.source).size());
  out << fmt::format("# {:<{}} {:<16} {:<10} {:>5} {:>9} {:>9}\n", "log", log_width, "collective",
                     "regime", "rows", "error", "spread");
  for (const RegimeSummary& s : report.summary) {
    out << fmt::format("  {:<{}} {:<16} {:<10} {:>5} {:>9} {:>8.1f}%\n", file_name(s.source),
                       log_width, s.collective, name(s.regime), s.rows, percent(s.ratio),
                       100.0 * s.spread);
  }
  out << "#\n";
}

void print_compare_csv(std::ostream& out, const CompareReport& report) {
  // The table's notes, as perf's CSV leads with its lists: '#' lines before the header.
  if (!report.restriction.empty()) out << "# note: " << report.restriction << "\n";
  for (const CompareTable& t : report.tables)
    for (const std::string& n : t.notes) out << "# note: " << t.log.source << ": " << n << "\n";
  out << "record,source,collective,ranks,nodes,regime,size_bytes,count,type,redop,root,measured_"
         "time_us,"
         "measured_busbw_gbps,predicted_time_us,predicted_busbw_gbps,algorithm,protocol,ratio,"
         "error,rows,spread,nccl_algo,nccl_algo_from,nccl_proto,nccl_proto_from,nccl_version_"
         "note,forced_algorithm,forced_protocol\n";
  for (const CompareTable& t : report.tables) {
    // The NCCL_ALGO / NCCL_PROTO the rows were predicted with (the log's, or --algo / --proto's)
    // and where from, as JSON's; empty = NCCL's choice. Then the note on the NCCL version the rows
    // were priced with, empty when it is the log's.
    const std::string forced = fmt::format(
        "{},{},{},{},{},{},{}", csv_field(t.log.nccl_algo), csv_field(t.log.nccl_algo_from),
        csv_field(t.log.nccl_proto), csv_field(t.log.nccl_proto_from),
        csv_field(t.nccl_version_note), t.forced_algorithm, t.forced_protocol);
    for (const CompareRow& r : t.rows) {
      const sim::NcclTestsRow& m = r.measured_row;
      out << fmt::format(
          "row,{},{},{},{},{},{},{},{},{},{},{:.3f},{:.4f},{:.3f},{:.4f},{},{},{:.6f},{:.6f},,,{}"
          "\n",
          csv_field(t.log.source), t.log.collective, t.log.ranks, t.log.nodes, name(r.regime),
          m.size_bytes, m.count, name(m.dtype), csv_field(m.redop), m.root, r.measured_time_us,
          r.measured_busbw_gbps, r.predicted_time_us, r.predicted_busbw_gbps, r.algorithm,
          r.protocol, r.ratio, r.ratio - 1, forced);
    }
  }
  for (const RegimeSummary& s : report.summary) {
    out << fmt::format("summary,{},{},,,{},,,,,,,,,,,,{:.6f},{:.6f},{},{:.6f},,,,,,,\n",
                       csv_field(s.source), s.collective, name(s.regime), s.ratio, s.ratio - 1,
                       s.rows, s.spread);
  }
}

void print_compare_json(std::ostream& out, const CompareReport& report) {
  // The NCCL_ALGO / NCCL_PROTO the rows were predicted with and where from; null = NCCL's choice.
  const auto or_null = [](const std::string& v) {
    return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v);
  };
  nlohmann::json j;
  j["topology"] = report.topology;
  j["fidelity"] = report.fidelity;
  j["measured"] = report.in_place ? "in_place" : "out_of_place";
  if (!report.restriction.empty()) j["restriction"] = report.restriction;
  j["tables"] = nlohmann::json::array();
  for (const CompareTable& t : report.tables) {
    nlohmann::json rows = nlohmann::json::array();
    for (const CompareRow& r : t.rows) {
      const sim::NcclTestsRow& m = r.measured_row;
      rows.push_back(
          {{"line", m.line},
           {"size_bytes", m.size_bytes},
           {"count", m.count},
           {"type", name(m.dtype)},
           {"redop", m.redop},
           {"root", m.root},
           {"regime", name(r.regime)},
           {"measured", {{"time_us", r.measured_time_us}, {"busbw_gbps", r.measured_busbw_gbps}}},
           {"predicted",
            {{"time_us", r.predicted_time_us},
             {"busbw_gbps", r.predicted_busbw_gbps},
             {"algorithm", r.algorithm},
             {"protocol", r.protocol}}},
           {"ratio", r.ratio},
           {"error", r.ratio - 1}});
    }
    nlohmann::json skipped = nlohmann::json::array();
    for (const sim::NcclTestsSkippedLine& s : t.skipped)
      skipped.push_back({{"line", s.line}, {"why", s.why}});
    // Whose version the table's is, "NCCL" or "RCCL"; null when the log printed none.
    const nlohmann::json library = t.log.nccl_version.empty()
                                       ? nlohmann::json(nullptr)
                                       : nlohmann::json(t.log.nccl_version_library);
    nlohmann::json table = {{"source", t.log.source},
                            {"collective", t.log.collective},
                            {"collective_from", t.log.collective_from},
                            {"ranks", t.log.ranks},
                            {"nodes", t.log.nodes},
                            {"gpus_per_thread", t.log.gpus_per_thread},
                            {"type", name(t.log.dtype)},
                            {"nccl_version", t.log.nccl_version},
                            {"nccl_version_library", library},
                            {"nccl_version_note", or_null(t.nccl_version_note)},
                            {"nccl_algo", or_null(t.log.nccl_algo)},
                            {"nccl_algo_from", or_null(t.log.nccl_algo_from)},
                            {"nccl_proto", or_null(t.log.nccl_proto)},
                            {"nccl_proto_from", or_null(t.log.nccl_proto_from)},
                            {"forced_algorithm", or_null(t.forced_algorithm)},
                            {"forced_protocol", or_null(t.forced_protocol)},
                            {"skipped_rows", t.skipped.size()},
                            {"skipped", skipped},
                            {"rows", std::move(rows)}};
    if (!t.notes.empty()) table["notes"] = t.notes;  // CompareTable::notes
    j["tables"].push_back(std::move(table));
  }
  j["summary"] = nlohmann::json::array();
  for (const RegimeSummary& s : report.summary) {
    j["summary"].push_back({{"source", s.source},
                            {"collective", s.collective},
                            {"regime", name(s.regime)},
                            {"rows", s.rows},
                            {"ratio", s.ratio},
                            {"error", s.ratio - 1},
                            {"spread", s.spread}});
  }
  out << json_dump(std::move(j), 2) << "\n";
}

}  // namespace twinccl::cli
