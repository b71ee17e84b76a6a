// `twinccl perf --backend sim`: every row predicted for the topology by the simulator (the
// algorithm and protocol NCCL's rule would pick, or the forced ones), #wrong from running the
// same collective on the emulator where it fits in memory (--check), busiest links and a
// Perfetto trace of the largest size from the flow model.
#include "perf_predict.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "emu_memory.h"
#include "output_file.h"
#include "perf_compare.h"
#include "perf_measure.h"
#include "perf_p2p.h"
#include "perf_predict_row.h"
#include "twinccl/errors.h"
#include "twinccl/sim/flow_report.h"
#include "twinccl/sim/held_out_record.h"
#include "twinccl/sim/nccl_env_choice.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/selection.h"
#include "twinccl/sim/timing.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/nccl_xml_hints.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::cli {
namespace {
// --trace FILE for one (collective, data type): FILE itself when the sweep has one of each or FILE
// is a device, else FILE with ".<collective>.<dtype>" before its extension (part_output_paths).
std::string trace_path(const PerfOptions& o, OpKind kind, DataType dtype) {
  std::vector<std::string> parts;
  std::size_t mine = 0;
  for (OpKind k : o.collectives) {
    for (DataType d : o.dtypes) {
      if (k == kind && d == dtype) mine = parts.size();
      parts.push_back(fmt::format("{}.{}", name(k), name(d)));
    }
  }
  if (parts.size() <= 1) return o.trace_file;
  return part_output_paths(o.trace_file, parts)[mine];
}

// `trace`: the file to write ("" = none).
void print_links_and_trace(const PerfOptions& o, const topo::Topology& t, OpKind kind,
                           DataType dtype, std::size_t count, const sim::Prediction& chosen,
                           const std::string& trace, std::ostream& out) {
  sim::Request r = make_request(o, kind, dtype, count);
  r.algorithm = chosen.algorithm;
  r.protocol = chosen.protocol;
  r.fidelity = sim::Fidelity::flow;
  sim::FlowReport rep = sim::simulate_flow(t, r, {.record_transfers = !trace.empty()});
  if (o.links) {
    out << fmt::format("# busiest links: {} {} count={} ({} {}), flow model {:.2f} us\n",
                       name(kind), name(dtype), count, chosen.algorithm, sim::name(chosen.protocol),
                       rep.prediction.time_us);
    out << fmt::format("# {:<44} {:>14} {:>12} {:>8}\n", "link (direction)", "bytes", "busy(us)",
                       "util");
    for (const sim::LinkLoad& l : sim::busiest_links(rep, 10)) {
      out << fmt::format("  {:<44} {:>14.0f} {:>12.2f} {:>7.1f}%\n", l.name, l.bytes, l.busy_us,
                         100 * l.utilisation);
    }
  }
  if (!trace.empty()) {
    write_output_file("--trace", trace, [&](std::ostream& f) { sim::write_trace_json(rep, f); });
    out << "# trace of " << rep.transfers.size() << " transfers written to " << trace
        << (rep.transfers_truncated ? " (truncated)" : "") << " (open in ui.perfetto.dev)\n";
  }
}

// The rows' predictions, by (collective, element size, count): perf's table and --compare share
// them, so the pair a row shows is timed once (a flow simulation each at --fidelity flow).
// The op is in the key for one rank only (NCCL's one-rank path scales for avg); else sum.
using PredictionCache =
    std::map<std::tuple<OpKind, std::size_t, std::size_t, ReduceKind>, sim::Prediction>;

// One line per size: every applicable (algorithm, protocol) with its predicted time, fastest first,
// the tuner's choice marked (perf_compare.h). --algo / --proto narrow the pairs timed (the choice
// is still NCCL's unforced one); the row's own pair is reused, not timed again.

std::string compare_table(const PerfOptions& o, const topo::Topology& t, OpKind kind,
                          DataType dtype, const std::vector<std::size_t>& sizes, int n,
                          const PredictionCache& predicted) {
  std::string text = fmt::format(
      "# which algorithm wins: {} {} on {} ({} model), time in us, fastest first{}\n", name(kind),
      name(dtype),
      (o.topology.empty() ? std::string("dgx-h100") : o.topology) + edits_text(o.edits), o.fidelity,
      o.algorithm.empty() && o.protocol.empty() && !o.nccl_lists.any()
          ? ""
          : " (only what --algo/--proto allow)");
  text += compare_legend();
  for (std::size_t bytes : sizes) {
    std::size_t count = count_for(kind, bytes, dtype, n);
    if (count == 0 && bytes > 0) continue;
    const sim::Request r = make_request(o, kind, dtype, count);  // --algo / --proto as given
    const auto row = predicted.find(std::make_tuple(kind, size_of(dtype), count, ReduceKind::sum));
    const std::vector<sim::Prediction> shown =
        sim::compare_all(t, r, row != predicted.end() ? &row->second : nullptr);
    text += compare_size_line(bytes_for(kind, count, dtype, n), shown);
  }
  return text;
}

}  // namespace

void load_perf_selection(PerfOptions& o) {
  sim::PolicyOptions options;
  options.nccl_version = sim::nccl_version_code(o.nccl_version);  // "" -> 0, the newest model
  if (o.topology.empty() && o.backend != "sim") {
    o.selection = std::make_shared<const sim::SelectionPolicy>(nullptr, options);
    return;
  }
  LoadedTopology t =
      load_edited_topology(o.topology.empty() ? "dgx-h100" : o.topology, o.edits, to_hints(o.xml));
  o.topology_notes = t.notes;
  o.selection = std::make_shared<const sim::SelectionPolicy>(
      std::make_shared<const topo::Topology>(std::move(t.topology)), options);
}

PerfReport run_predicted_perf(const PerfOptions& options) {
  PerfOptions o = options;
  PerfReport report;
  std::string topo_name = o.topology.empty() ? "dgx-h100" : o.topology;
  for (const std::string& n : o.topology_notes) report.header_lines.push_back("what-if: " + n);
  const topo::Topology& t = *o.selection->topology();
  std::string host = topo_name.substr(topo_name.find_last_of('/') + 1);
  topo_name += edits_text(o.edits);
  const int gpus = t.gpu_count();
  if (o.ranks > gpus) {
    throw InvalidArgument(fmt::format(
        "-g/--ranks {}: {} has {} GPU{}; pick at most that many (or a larger --topology)", o.ranks,
        topo_name, gpus, gpus == 1 ? "" : "s"));
  }
  const int n = o.ranks > 0 ? o.ranks : gpus;
  o.ranks = n;
  for (OpKind kind : o.collectives) check_p2p_ranks(kind, n);
  if (o.root >= n) {
    throw InvalidArgument(fmt::format("-r {}: the root must be a rank in [0, {}] ({} rank{} of {})",
                                      o.root, n - 1, n, n == 1 ? "" : "s", topo_name));
  }
  report.title = fmt::format("# twinccl perf: predicted for {} ({} of its {} GPU{}), {} model",
                             topo_name, n, gpus, gpus == 1 ? "" : "s", o.fidelity);
  if (n == gpus) {
    report.title = fmt::format("# twinccl perf: predicted for {} ({} GPU{}), {} model", topo_name,
                               n, n == 1 ? "" : "s", o.fidelity);
  }
  for (char& ch : host) {
    if (ch == ' ' || ch == '\t') ch = '_';
  }
  std::map<int, int> ranks_seen_on_node;  // node -> ranks before this one (was O(n^2))
  for (int r = 0; r < n; ++r) {
    const topo::Vertex& v = t.vertex(t.gpu(r));
    const int local = ranks_seen_on_node[v.node]++;
    report.config.devices.push_back(
        {r, local, t.node_count() > 1 ? fmt::format("{}-n{}", host, v.node) : host,
         "simulated GPU (" + v.name + ")"});
  }
  report.header_lines.push_back(
      n == 1 ? "time: the simulator's prediction; one rank: NCCL runs no algorithm "
               "(ncclLaunchOneRank): one_rank/copy = a device-memory copy out of place and "
               "nothing in place, one_rank/scale = a scaling kernel (avg)"
             : "time: the simulator's prediction (the same for out-of-place and in-place); "
               "algorithm/protocol: the fastest applicable (NCCL's rule) unless forced");
  const std::string held_out = sim::held_out_note(o.topology.empty() ? "dgx-h100" : o.topology, t,
                                                  n, !edits_text(o.edits).empty());
  if (!held_out.empty()) report.header_lines.push_back(held_out);
  if (std::any_of(o.collectives.begin(), o.collectives.end(), is_p2p_test)) {
    report.header_lines.push_back(p2p_channels_note(o.selection->tuner(o.ranks)));
  }
  if (o.nccl_lists.any()) report.header_lines.push_back(o.nccl_lists.note(o.collectives));
  if (std::any_of(o.collectives.begin(), o.collectives.end(), sim::nccl_tunes)) {
    const std::string replaced = profile_replaced_note(o.nccl_lists, t, topo_name);
    if (!replaced.empty()) report.header_lines.push_back(replaced);
  }
  report.nccl_algo = o.nccl_lists.algo;
  report.nccl_proto = o.nccl_lists.proto;
  report.header_lines.push_back(
      o.check
          ? fmt::format(
                "#wrong: the collective run on {} emulated ranks vs the reference model when all "
                "buffers fit in --check-max {} bytes (else N/A)",
                n, o.check_max_bytes)
          : "#wrong: not checked (-c 0)");
  o.iterations = 0;  // the emulator only checks here; it does not time
  o.warmup = 0;
  o.backend = "emu";
  std::vector<std::size_t> sizes = sweep_sizes(o);
  // A prediction depends on the data type only through its size and on the reduce op not at all:
  // -d all -o all predicts each (collective, element size, count) once.
  PredictionCache predicted;
  std::set<std::tuple<OpKind, std::string, sim::Protocol>> forced_checked;  // pairs noted once
  const std::vector<RowSpec> rows = sweep_rows(o, n);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto [kind, dtype, op, count] = rows[i];
    const ReduceKind key_op = n == 1 ? op : ReduceKind::sum;
    const auto key = std::make_tuple(kind, size_of(dtype), count, key_op);
    auto cached = predicted.find(key);
    if (cached == predicted.end()) {
      cached = predicted.emplace(key, predict_row(o, kind, dtype, count, key_op)).first;
    }
    const sim::Prediction& p = cached->second;
    // One rank in place: NCCL does nothing (or scales), not the out-of-place copy.
    const double in_place_us =
        p.one_rank.empty() ? p.time_us : predict_row(o, kind, dtype, count, key_op, true).time_us;
    std::optional<long long> wrong[2];
    std::string checked_with;
    if (o.check && checkable(o, kind, count, dtype, n)) {
      // The emulator runs the row's own algorithm (its schedule: nvls_tree plays hierarchical),
      // chosen on this very topology.
      PerfOptions row_options = o;
      row_options.algorithm = is_p2p_test(kind) ? "" : sim::schedule_for(p.algorithm);
      RowResult r = measure_row(row_options, kind, dtype, op, count);
      if (!r.unchecked[0]) wrong[0] = r.wrong[0];
      if (!r.unchecked[1]) wrong[1] = r.wrong[1];
      checked_with = r.algorithm;
    }
    // The note says twinccl's exact names forced the pair: not when NCCL's syntax gave either;
    // its profile part whenever a protocol is forced (--algo 'Ring,Tree' --proto LL on GCP).
    if ((!o.nccl_lists.any() || !o.protocol.empty()) &&
        forced_checked.insert(std::make_tuple(kind, p.algorithm, p.protocol)).second) {
      const auto note_of =
          o.nccl_lists.any() ? forced_outside_profile_note : forced_outside_nccl_note;
      const std::string note =
          note_of(o.selection->tuner(o.ranks), make_request(o, kind, dtype, count), p);
      if (!note.empty()) report.header_lines.push_back(note);
    }
    report.rows.push_back(PerfRow{
        kind, bytes_for(kind, count, dtype, n), count, dtype, op, is_rooted(kind) ? o.root : -1,
        make_measurement(kind, count, dtype, n, p.time_us, wrong[0]),
        make_measurement(kind, count, dtype, n, in_place_us, wrong[1]),
        p.one_rank.empty() ? p.algorithm : "one_rank",
        p.one_rank.empty() ? std::string(sim::name(p.protocol)) : p.one_rank, std::nullopt, "",
        o.report_timestamps ? timestamp_now() : "", checked_with});
    // After the last row of a (collective, data type, op): --compare, --links and --trace.
    if (i + 1 < rows.size() && !starts_sweep(rows, i + 1)) continue;
    if (is_p2p_test(kind)) {
      if (o.compare || o.links || !o.trace_file.empty()) {
        report.footer += "# --compare/--links/--trace: not for " +
                         std::string(perf_test_name(kind)) +
                         " (grouped send/recv, no algorithm choice)\n";
      }
      continue;
    }
    if (o.compare) report.footer += compare_table(o, t, kind, dtype, sizes, n, predicted);
    // The transfers do not depend on the op: one trace per data type, at its first op.
    const bool first_op = op == (sweeps_ops(kind) ? o.ops.front() : ReduceKind::sum);
    const std::string trace = first_op && !o.trace_file.empty() ? trace_path(o, kind, dtype) : "";
    if ((o.links || !trace.empty()) && count > 0) {
      std::ostringstream notes;
      print_links_and_trace(o, t, kind, dtype, count, p, trace, notes);
      report.footer += notes.str();
    }
  }
  return report;
}

void add_predictions(PerfReport& report, const PerfOptions& o) {
  for (const std::string& n : o.topology_notes) report.header_lines.push_back("what-if: " + n);
  const topo::Topology& t = *o.selection->topology();
  if (o.ranks > t.gpu_count()) {
    throw InvalidArgument(
        fmt::format("--topology {} has {} GPU{}, fewer than the {} ranks measured", o.topology,
                    t.gpu_count(), t.gpu_count() == 1 ? "" : "s", o.ranks));
  }
  report.header_lines.push_back("predicted: the simulator's " + o.fidelity + " prediction on " +
                                o.topology + edits_text(o.edits) + " for " +
                                std::to_string(o.ranks) + " ranks");
  const std::string held_out =
      sim::held_out_note(o.topology, t, o.ranks, !edits_text(o.edits).empty());
  if (!held_out.empty()) report.header_lines.push_back(held_out);
  if (std::any_of(o.collectives.begin(), o.collectives.end(), is_p2p_test)) {
    report.header_lines.push_back(p2p_channels_note(o.selection->tuner(o.ranks)));
  }
  for (PerfRow& row : report.rows) {
    std::size_t count = count_for(row.kind, row.bytes, row.dtype, o.ranks);
    sim::Prediction p = predict_row(o, row.kind, row.dtype, count, row.op);
    row.predicted = make_measurement(row.kind, count, row.dtype, o.ranks, p.time_us, std::nullopt);
    row.predicted_choice = sim::label(p);
  }
}

}  // namespace twinccl::cli
