// `compare`'s note on rows priced as NCCL ran them (compare_ran_note.h).
//
// How it works: the rows whose choice differs from the simulator's are grouped into runs of
// consecutive rows with the same pair of labels, each shown as its first and last size.
#include "compare_ran_note.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include "twinccl/sim/nccl_env_choice.h"
#include "twinccl/sim/selection.h"

namespace twinccl::cli {

std::string short_size(std::size_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(kUnits)) v /= 1024.0, ++u;
  return v == static_cast<double>(static_cast<long long>(v))
             ? fmt::format("{:.0f} {}", v, kUnits[u])
             : fmt::format("{:.1f} {}", v, kUnits[u]);
}

std::string ran_choice_note(const std::vector<RanRow>& ran, std::size_t rows,
                            const std::string& from, int conflicting, bool forced) {
  std::string note;
  if (!ran.empty() && forced) {
    note = fmt::format(
        "NCCL's per-call lines (NCCL_DEBUG_SUBSYS=TUNING, from {}) say what ran at {} of {} "
        "rows; not used: --algo / --proto force the pair",
        from, ran.size(), rows);
  } else if (!ran.empty()) {
    note = fmt::format(
        "priced as NCCL ran each size (its NCCL_DEBUG_SUBSYS=TUNING lines, from {}): {} of {} "
        "rows",
        from, ran.size(), rows);
    std::string groups;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < ran.size(); ++i) {
      if (ran[i].ran == ran[i].own) continue;
      std::size_t j = i;
      while (j + 1 < ran.size() && ran[j + 1].ran == ran[i].ran && ran[j + 1].own == ran[i].own)
        ++j;
      const std::string sizes = i == j ? short_size(ran[i].size_bytes)
                                       : fmt::format("{} - {}", short_size(ran[i].size_bytes),
                                                     short_size(ran[j].size_bytes));
      groups += fmt::format("{}{} ran {} (the simulator's: {})", groups.empty() ? "" : ", ", sizes,
                            ran[i].ran, ran[i].own);
      differ += j - i + 1;
      i = j;
    }
    note += differ == 0
                ? "; the simulator's own choice is the same at each"
                : fmt::format("; the simulator's own choice differs at {}: {}", differ, groups);
  }
  if (conflicting > 0) {
    note += fmt::format(
        "{}{} row(s) whose size NCCL's per-call lines name with different choices (rows of "
        "several data types or ops sharing a size) are priced with NCCL's choice",
        note.empty() ? "" : "; ", conflicting);
  }
  return note;
}

std::optional<OffRow> off_row(const topo::Topology& topology, const sim::Request& request,
                              const sim::Prediction& p, double measured_us,
                              std::size_t size_bytes) {
  if (!p.one_rank.empty() || !(p.time_us > 0) || !(measured_us > 0) ||
      std::fabs(p.time_us / measured_us - 1.0) <= 0.10) {
    return std::nullopt;
  }
  OffRow r{size_bytes, p.algorithm, {}};
  sim::Request analytic = request;
  analytic.fidelity = sim::Fidelity::analytic;
  for (const sim::Prediction& alt : sim::compare_all(topology, analytic, &p)) {
    if (!sim::nccl_algorithm_name(alt.algorithm).empty() &&
        std::fabs(alt.time_us / measured_us - 1.0) <= 0.10 &&
        std::find(r.fitting.begin(), r.fitting.end(), alt.algorithm) == r.fitting.end()) {
      r.fitting.push_back(alt.algorithm);
    }
  }
  return r;
}

std::string look_alike_for(const topo::Topology& topology, const sim::NcclTestsTable& table) {
  if (!table.kind || !sim::nccl_tunes(*table.kind)) return "";
  const sim::LoggedChoice logged = sim::logged_choice(table);
  if (logged.restricted()) return "";
  std::vector<OffRow> off;
  for (const sim::NcclTestsRow& row : table.rows) {
    if (!row.ran_algorithm.empty()) return "";  // the rows say what ran
    if (!row.out_of_place || row.count == 0) continue;
    const sim::Request request = sim::request_of(table, row, false);
    const sim::Prediction p = sim::predict_logged(topology, request, logged, table.source);
    if (auto r = off_row(topology, request, p, row.out_of_place->time_us, row.size_bytes))
      off.push_back(std::move(*r));
  }
  return look_alike_note(off, table.rows.size());
}

std::string look_alike_note(const std::vector<OffRow>& off, std::size_t rows) {
  std::map<std::string, std::vector<std::size_t>> fits;  // algorithm -> sizes it fits
  for (const OffRow& r : off) {
    for (const std::string& a : r.fitting) {
      if (a != r.chosen) fits[a].push_back(r.size_bytes);
    }
  }
  const std::pair<const std::string, std::vector<std::size_t>>* best = nullptr;
  for (const auto& f : fits) {
    if (!best || f.second.size() > best->second.size()) best = &f;
  }
  // A hint, not a finding: a price can match by chance (a slow fabric priced as a slower
  // protocol), so one algorithm must fit most of the rows off, 3 at least.
  if (!best || best->second.size() < 3 || 5 * best->second.size() < 3 * off.size()) return "";
  const std::vector<std::size_t>& sizes = best->second;
  const std::string& a = best->first;
  return fmt::format(
      "{} of {} rows are off by more than 10%, and {} of them ({} - {}) are within 10% of the "
      "simulator's price for {}: NCCL may have run {} there (or the cluster is slower than the "
      "topology in a way that price happens to match); its per-call lines "
      "(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING in the log, or rank 0's NCCL_DEBUG_FILE with "
      "--nccl-debug) say what it ran, and compare then prices each size as it ran (--algo {} "
      "prices every row so)",
      off.size(), rows, sizes.size(), short_size(sizes.front()), short_size(sizes.back()), a, a, a);
}

}  // namespace twinccl::cli
