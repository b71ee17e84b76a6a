#include "perf_table.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <nlohmann/json.hpp>
#include <ostream>

#include "twinccl/perf_math.h"

namespace twinccl::cli {
namespace {

std::string wrong_text(const Measurement& m) { return m.wrong ? std::to_string(*m.wrong) : "N/A"; }

}  // namespace

Measurement make_measurement(OpKind kind, std::size_t count, DataType dtype, int nranks, double time_us,
                             std::optional<long long> wrong) {
  Measurement m;
  m.time_us = time_us;
  double seconds = time_us * 1e-6;
  m.algbw_gbps = seconds > 0 ? algbw_bytes(kind, count, dtype, nranks) / seconds / 1e9 : 0;
  m.busbw_gbps = m.algbw_gbps * busbw_factor(kind, nranks);
  m.wrong = wrong;
  return m;
}

void print_table(std::ostream& out, const PerfReport& report) {
  out << report.title << "\n";
  for (const auto& line : report.header_lines) out << "# " << line << "\n";
  bool with_algo = false, with_prediction = false;
  for (const auto& r : report.rows) {
    with_algo |= !r.algorithm.empty();
    with_prediction |= r.predicted.has_value();
  }
  out << "#\n";
  out << fmt::format("# {:>12} {:>12} {:>9} {:>6} {:>5}   {:>9} {:>8} {:>8} {:>6}   {:>9} {:>8} {:>8} {:>6}{}\n",
                     "", "", "", "", "", "out-of-place", "", "", "", "in-place", "", "", "", "");
  out << fmt::format("# {:>12} {:>12} {:>9} {:>6} {:>5}   {:>9} {:>8} {:>8} {:>6}   {:>9} {:>8} {:>8} {:>6}{}\n",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                     "busbw", "#wrong",
                     std::string(with_algo ? "   algorithm/protocol" : "") +
                         (with_prediction ? "   predicted: time(us) busbw(GB/s) algorithm/protocol" : ""));
  out << fmt::format("# {:>12} {:>12} {:>9} {:>6} {:>5}   {:>9} {:>8} {:>8} {:>6}   {:>9} {:>8} {:>8} {:>6}\n",
                     "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  double busbw_sum = 0;
  OpKind last_kind = report.rows.empty() ? OpKind::all_reduce : report.rows.front().kind;
  for (const auto& r : report.rows) {
    if (r.kind != last_kind) out << "#\n";
    last_kind = r.kind;
    bool reducing = is_reducing(r.kind);
    out << fmt::format("  {:>12} {:>12} {:>9} {:>6} {:>5}   {:>9.2f} {:>8.2f} {:>8.2f} {:>6}   {:>9.2f} {:>8.2f} {:>8.2f} {:>6}",
                       r.bytes, r.count, name(r.dtype), reducing ? std::string(name(r.op)) : "none",
                       r.root >= 0 ? std::to_string(r.root) : "-1", r.out_of_place.time_us, r.out_of_place.algbw_gbps,
                       r.out_of_place.busbw_gbps, wrong_text(r.out_of_place), r.in_place.time_us,
                       r.in_place.algbw_gbps, r.in_place.busbw_gbps, wrong_text(r.in_place));
    if (with_algo) out << "   " << r.algorithm << (r.protocol.empty() ? "" : "/" + r.protocol);
    if (r.predicted) {
      out << fmt::format("   {:>9.2f} {:>8.2f} {}", r.predicted->time_us, r.predicted->busbw_gbps, r.predicted_choice);
    }
    out << "\n";
    busbw_sum += r.in_place.busbw_gbps;
  }
  long long wrong_total = 0;
  bool any_checked = false;
  for (const auto& r : report.rows) {
    for (const Measurement* m : {&r.out_of_place, &r.in_place}) {
      if (m->wrong) {
        any_checked = true;
        wrong_total += *m->wrong;
      }
    }
  }
  out << fmt::format("# Out of bounds values : {} {}\n", any_checked ? std::to_string(wrong_total) : "N/A",
                     !any_checked ? "(not checked)" : (wrong_total == 0 ? "OK" : "WRONG"));
  out << fmt::format("# Avg bus bandwidth    : {:.4f} \n#\n",
                     report.rows.empty() ? 0.0 : busbw_sum / static_cast<double>(report.rows.size()));
  out << report.footer;
}

void print_csv(std::ostream& out, const PerfReport& report) {
  out << "collective,size_bytes,count,type,redop,root,algorithm,protocol,oop_time_us,oop_algbw_gbps,oop_busbw_gbps,"
         "oop_wrong,ip_time_us,ip_algbw_gbps,ip_busbw_gbps,ip_wrong,predicted_time_us,predicted_busbw_gbps\n";
  for (const auto& r : report.rows) {
    out << fmt::format("{},{},{},{},{},{},{},{},{:.3f},{:.4f},{:.4f},{},{:.3f},{:.4f},{:.4f},{},{},{}\n", name(r.kind),
                       r.bytes, r.count, name(r.dtype), is_reducing(r.kind) ? name(r.op) : "none", r.root,
                       r.algorithm, r.protocol, r.out_of_place.time_us, r.out_of_place.algbw_gbps,
                       r.out_of_place.busbw_gbps, wrong_text(r.out_of_place), r.in_place.time_us,
                       r.in_place.algbw_gbps, r.in_place.busbw_gbps, wrong_text(r.in_place),
                       r.predicted ? fmt::format("{:.3f}", r.predicted->time_us) : "",
                       r.predicted ? fmt::format("{:.4f}", r.predicted->busbw_gbps) : "");
  }
}

void print_json(std::ostream& out, const PerfReport& report) {
  nlohmann::json j;
  j["title"] = report.title;
  j["header"] = report.header_lines;
  j["rows"] = nlohmann::json::array();
  auto measurement = [](const Measurement& m) {
    nlohmann::json x{{"time_us", m.time_us}, {"algbw_gbps", m.algbw_gbps}, {"busbw_gbps", m.busbw_gbps}};
    x["wrong"] = m.wrong ? nlohmann::json(*m.wrong) : nlohmann::json(nullptr);
    return x;
  };
  for (const auto& r : report.rows) {
    j["rows"].push_back({{"collective", name(r.kind)}, {"size_bytes", r.bytes}, {"count", r.count},
                         {"type", name(r.dtype)}, {"redop", is_reducing(r.kind) ? name(r.op) : "none"},
                         {"root", r.root}, {"algorithm", r.algorithm}, {"protocol", r.protocol},
                         {"out_of_place", measurement(r.out_of_place)}, {"in_place", measurement(r.in_place)}});
    if (r.predicted) {
      j["rows"].back()["predicted"] = measurement(*r.predicted);
      j["rows"].back()["predicted"]["choice"] = r.predicted_choice;
    }
  }
  if (!report.footer.empty()) j["notes"] = report.footer;
  out << j.dump(2) << "\n";
}

}  // namespace twinccl::cli
