// Predicting a held-out figure as nccl-tests times it, and counting per class (figures_judge.h).
#include "figures_judge.h"

#include <cmath>
#include <exception>
#include <iomanip>
#include <sstream>

#include "twinccl/operation.h"
#include "twinccl/sim/held_out_record.h"
#include "twinccl/sim/p2p.h"
#include "twinccl/sim/timing.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

namespace twinccl::fidelity {
namespace {

// The `;`-separated --set edits of a row ("nic_gbps=9;nodes=4"; empty items are skipped).
topo::TopologyEdits edits_of(const std::string& settings) {
  topo::TopologyEdits edits;
  std::size_t start = 0;
  while (start <= settings.size()) {
    const std::size_t end = std::min(settings.find(';', start), settings.size());
    const std::string item = settings.substr(start, end - start);
    if (item.find_first_not_of(" \t") != std::string::npos) {
      edits.settings.push_back(topo::parse_setting(item));
    }
    start = end + 1;
  }
  return edits;
}

// nccl-tests' count: its size is nranks x count x 4 B for these (count per rank), count x 4 B else.
bool per_rank_count(const std::string& collective) {
  return collective == "all_gather" || collective == "reduce_scatter" || collective == "alltoall";
}

}  // namespace

std::string shown_bytes(std::size_t bytes) {
  const char* const units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) bytes /= 1024, ++u;
  return std::to_string(bytes) + " " + units[u];
}

const topo::Topology& FigureJudge::topology(const FigureRow& row) {
  const std::string key = row.preset + "\n" + row.settings;
  auto found = loaded_.find(key);
  if (found == loaded_.end()) {
    topo::Topology t = topo::load_topology(row.preset);
    const topo::TopologyEdits edits = edits_of(row.settings);
    if (!edits.empty()) t = topo::apply_edits(t, edits).topology;
    found = loaded_.emplace(key, std::move(t)).first;
  }
  return found->second;
}

Judged FigureJudge::judge(const FigureRow& row) {
  Judged j;
  try {
    const topo::Topology& t = topology(row);
    const int nranks = row.machine_class == "one-gpu" ? 1 : t.gpu_count();
    j.machine_class = sim::machine_class_of(row.preset, t.node_count(), nranks).value_or("");
    const std::size_t elements = row.bytes / 4;
    const std::size_t divisor = per_rank_count(row.collective) ? std::size_t(nranks) : 1;
    if (row.bytes % (4 * divisor) != 0) {
      j.problem = std::to_string(row.bytes) + " B is not a whole number of float32 elements" +
                  (divisor > 1 ? " per rank of " + std::to_string(nranks) : std::string()) +
                  " (nccl-tests' size of " + row.collective + ")";
      return j;
    }
    if (row.collective == "sendrecv") {
      const sim::Tuner tuner(t, nranks);
      j.predicted_us =
          sim::predict_p2p(tuner, sim::sendrecv_pattern(nranks, static_cast<double>(row.bytes)),
                           sim::Fidelity::analytic, row.gpus_per_thread)
              .time_us;
      j.label = "p2p";
    } else {
      sim::Request r;
      r.spec.kind = parse_op_kind(row.collective);
      r.spec.nranks = nranks;
      r.spec.count = elements / divisor;
      r.dtype = DataType::float32;
      r.algorithm = row.algo;
      r.gpus_per_thread = row.gpus_per_thread;
      r.nccl_version = sim::nccl_version_code(row.nccl_version);
      r.in_place = row.in_place;
      const sim::Prediction p = sim::predict(t, r);
      j.predicted_us = p.time_us;
      j.label = sim::label(p);
    }
  } catch (const std::exception& e) {
    j.problem = e.what();
    return j;
  }
  j.error = j.predicted_us / row.measured_us - 1.0;
  j.within_band = std::abs(j.error) <= row.band;
  return j;
}

void Scoreboard::count(Tally& t, const FigureRow& row, const Judged& judged) {
  ++t.rows;
  if (row.fitted_on()) {
    ++t.fitted;
    return;
  }
  const double e = std::abs(judged.error);
  if (row.bytes >= 64 * kMiB) {
    ++t.large;
    t.large_in += e <= 0.10;
  } else if (row.bytes < kMiB) {
    ++t.small;
    t.small_in += e <= 0.25;
  } else {
    ++t.middle;
    t.middle_in += e <= 0.25;
  }
  const double ratio = judged.predicted_us / row.measured_us;
  t.off_2x += ratio > 2.0 || ratio < 0.5;
  if (e >= t.worst) {
    t.worst = e;
    std::ostringstream w;
    w << std::showpos << std::fixed << std::setprecision(1) << judged.error * 100 << "% "
      << row.source << " " << row.collective << " " << shown_bytes(row.bytes);
    t.worst_where = w.str();
  }
}

void Scoreboard::add(const FigureRow& row, const Judged& judged) {
  count(by_class_[row.machine_class], row, judged);
  count(all_, row, judged);
}

void Scoreboard::print_line(std::ostream& out, const std::string& name, const Tally& t) {
  const auto share = [](int n, int of) {
    return of == 0 ? std::string("-") : std::to_string(n) + "/" + std::to_string(of);
  };
  out << "| " << name << " | " << t.rows << " | " << t.fitted << " | " << share(t.large_in, t.large)
      << " | " << share(t.small_in, t.small) << " | " << share(t.middle_in, t.middle) << " | "
      << t.worst_where << " | " << t.off_2x << " |\n";
}

std::vector<sim::HeldOutRecord> Scoreboard::records() const {
  std::vector<sim::HeldOutRecord> out;
  for (const std::string& c : figure_classes()) {
    const auto found = by_class_.find(c);
    if (found == by_class_.end()) continue;
    const Tally& t = found->second;
    out.push_back({c, t.large_in, t.large, t.small_in, t.small, t.middle_in, t.middle, t.off_2x});
  }
  return out;
}

void Scoreboard::print(std::ostream& out) const {
  out << "| class | rows | fitted on (not judged) | large (>= 64 MiB) within 10% | small (< 1 "
         "MiB) within 25% | middle within 25% | worst error | off by > 2x |\n"
         "|---|---|---|---|---|---|---|---|\n";
  for (const std::string& c : figure_classes()) {
    const auto found = by_class_.find(c);
    if (found != by_class_.end()) print_line(out, c, found->second);
  }
  print_line(out, "all", all_);
}

}  // namespace twinccl::fidelity
