// The printers of `twinccl whatif` (whatif_report.h): a side-by-side table (one column group per
// topology, the ratio of each time to the first topology's), CSV (one line per topology and size)
// and JSON.
#include "whatif_report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "flag_values.h"
#include "nccl_list_flags.h"
#include "twinccl/utf8_text.h"

namespace twinccl::cli {
namespace {

void print_legend(std::ostream& out, const WhatifStudy& s) {
  for (std::size_t v = 0; v < s.variants.size(); ++v) {
    const WhatifVariant& x = s.variants[v];
    out << fmt::format("# [{}] {} ({} GPUs{})\n", v + 1, x.label, x.gpus,
                       x.topology == x.label ? "" : ", topology " + x.topology);
    for (const std::string& n : x.notes) out << fmt::format("#     what-if: {}\n", n);
    if (!x.held_out.empty()) out << "#     " << x.held_out << "\n";
  }
}

}  // namespace

std::optional<double> ratio_to_first(const WhatifRow& row, std::size_t variant) {
  if (row.cells.empty() || !row.cells.front() || variant >= row.cells.size() ||
      !row.cells[variant] || !(row.cells.front()->time_us > 0.0)) {
    return std::nullopt;
  }
  const double ratio = row.cells[variant]->time_us / row.cells.front()->time_us;
  if (!std::isfinite(ratio)) return std::nullopt;
  return ratio;
}

namespace {

// The ratio as the table shows it ("1.50x"), "-" when it cannot be computed; `missing` is set then.
std::string ratio_cell(const WhatifRow& row, std::size_t variant, bool& missing) {
  const std::optional<double> r = ratio_to_first(row, variant);
  if (!r) missing = true;
  return r ? fmt::format("{:.2f}x", *r) : std::string("-");
}

// CSV: "1.5000", or an empty field.
std::string ratio_csv(const WhatifRow& row, std::size_t variant) {
  const std::optional<double> r = ratio_to_first(row, variant);
  return r ? fmt::format("{:.4f}", *r) : std::string();
}

constexpr const char* kNoRatio =
    "# ratio '-': [1] has no result there or took 0 us, so no ratio can be computed\n";

}  // namespace

void print_whatif_table(std::ostream& out, const WhatifStudy& s) {
  if (s.replay) {
    out << fmt::format("# twinccl whatif: trace {} replayed, {} model; ratio = time / [1]'s time\n",
                       s.subject, s.fidelity);
    print_legend(out, s);
    out << fmt::format("{:>4} {:>14} {:>7} {:>12} {:>12}  {}\n", "", "time_us", "ratio", "comm_us",
                       "exposed_us", "busiest link (utilisation)");
    bool no_ratio = false;
    for (std::size_t v = 0; v < s.variants.size(); ++v) {
      const WhatifCell& c = *s.rows.front().cells[v];
      out << fmt::format(
          "{:>4} {:>14.1f} {:>7} {:>12.1f} {:>12.1f}  {}\n", fmt::format("[{}]", v + 1), c.time_us,
          ratio_cell(s.rows.front(), v, no_ratio), c.comm_us, c.exposed_us, c.busiest_link);
    }
    if (no_ratio) out << kNoRatio;
    return;
  }
  out << fmt::format(
      "# twinccl whatif: {}, {} model; time in us, busbw in GB/s, ratio = time / [1]'s time\n",
      s.subject, s.fidelity);
  if (!s.restriction.empty()) out << "# " << s.restriction << "\n";
  print_legend(out, s);
  std::string head = fmt::format("{:>14}", "size (B)");
  std::string units = fmt::format("{:>14}", "");
  for (std::size_t v = 0; v < s.variants.size(); ++v) {
    head += fmt::format(" | {:^29}", fmt::format("[{}]", v + 1));
    units += fmt::format(" | {:>11} {:>8} {:>7}", "time_us", "busbw", "ratio");
  }
  out << head << "\n" << units << "\n";
  bool no_ratio = false;
  for (const WhatifRow& row : s.rows) {
    std::string line = fmt::format("{:>14}", row.bytes);
    for (std::size_t v = 0; v < row.cells.size(); ++v) {
      if (!row.cells[v]) {
        line += fmt::format(" | {:>11} {:>8} {:>7}", "-", "-", "-");
        continue;
      }
      line += fmt::format(" | {:>11.2f} {:>8.2f} {:>7}", row.cells[v]->time_us,
                          row.cells[v]->busbw_gbps, ratio_cell(row, v, no_ratio));
    }
    out << line << "\n";
  }
  bool missing = false;
  for (const WhatifRow& row : s.rows) {
    for (const auto& c : row.cells) missing = missing || !c;
  }
  if (missing) out << "# '-': the size does not split into whole elements per rank there\n";
  if (no_ratio) out << kNoRatio;
}

void print_whatif_csv(std::ostream& out, const WhatifStudy& s) {
  out << nccl_lists_csv_line(s.nccl_algo, s.nccl_proto);
  out << (s.replay ? "variant,label,topology,gpus,time_us,comm_us,exposed_us,ratio_to_first,"
                     "busiest_link\n"
                   : "variant,label,topology,gpus,size_bytes,bytes,time_us,algbw_gbps,busbw_gbps,"
                     "algorithm,protocol,ratio_to_first\n");
  for (const WhatifRow& row : s.rows) {
    for (std::size_t v = 0; v < row.cells.size(); ++v) {
      if (!row.cells[v]) continue;
      const WhatifVariant& x = s.variants[v];
      const WhatifCell& c = *row.cells[v];
      const std::string common =
          fmt::format("{},{},{},{}", v + 1, csv_field(x.label), csv_field(x.topology), x.gpus);
      if (s.replay) {
        out << fmt::format("{},{:.3f},{:.3f},{:.3f},{},{}\n", common, c.time_us, c.comm_us,
                           c.exposed_us, ratio_csv(row, v), csv_field(c.busiest_link));
      } else {
        out << fmt::format("{},{},{},{:.3f},{:.3f},{:.3f},{},{},{}\n", common, row.bytes, c.bytes,
                           c.time_us, c.algbw_gbps, c.busbw_gbps, c.algorithm, c.protocol,
                           ratio_csv(row, v));
      }
    }
  }
}

void print_whatif_json(std::ostream& out, const WhatifStudy& s) {
  nlohmann::json j;
  j["kind"] = s.replay ? "replay" : "sweep";
  j["subject"] = s.subject;
  j["fidelity"] = s.fidelity;
  if (!s.restriction.empty()) j["restriction"] = s.restriction;
  add_nccl_lists_json(j, s.nccl_algo, s.nccl_proto);
  j["variants"] = nlohmann::json::array();
  for (const WhatifVariant& x : s.variants) {
    j["variants"].push_back({{"label", x.label},
                             {"topology", x.topology},
                             {"gpus", x.gpus},
                             {"notes", x.notes},
                             {"held_out", x.held_out}});
  }
  j["rows"] = nlohmann::json::array();
  for (const WhatifRow& row : s.rows) {
    nlohmann::json cells = nlohmann::json::array();
    for (std::size_t v = 0; v < row.cells.size(); ++v) {
      if (!row.cells[v]) {
        cells.push_back(nullptr);
        continue;
      }
      const WhatifCell& c = *row.cells[v];
      const std::optional<double> ratio = ratio_to_first(row, v);
      nlohmann::json cell{{"time_us", c.time_us}, {"ratio_to_first", nullptr}};
      if (ratio) cell["ratio_to_first"] = *ratio;
      if (s.replay) {
        cell["comm_us"] = c.comm_us;
        cell["exposed_us"] = c.exposed_us;
        cell["busiest_link"] = c.busiest_link;
      } else {
        cell["bytes"] = c.bytes;
        cell["algbw_gbps"] = c.algbw_gbps;
        cell["busbw_gbps"] = c.busbw_gbps;
        cell["algorithm"] = c.algorithm;
        cell["protocol"] = c.protocol;
      }
      cells.push_back(cell);
    }
    nlohmann::json r{{"results", cells}};
    if (!s.replay) r["size_bytes"] = row.bytes;
    j["rows"].push_back(r);
  }
  out << json_dump(std::move(j), 2) << "\n";
}

}  // namespace twinccl::cli
