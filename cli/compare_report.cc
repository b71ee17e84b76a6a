// `twinccl compare`: predictions for measured nccl-tests rows and their geometric-mean errors.
//
// Each row is predicted as nccl-tests ran it: the log's collective, dtype and count (NCCL's
// count, per rank for reduce_scatter / all_gather / all_to_all), on the first `ranks` GPUs of the
// topology, which must span as many nodes as the log's hosts. The ratio predicted / measured time
// is summarised per size regime by its geometric mean (a bias: -30% = predicted 30% too fast) and
// by the geometric mean of max(r, 1/r) (a spread: how far off a row typically is, either way).
// The prediction includes the host launch nccl-tests measures (sim::Request::gpus_per_thread):
// the log's nGpus (-g), one GPU per thread when the log has no "# nThread" line.
#include "compare_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "compare_ran_note.h"
#include "flag_values.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/sim/nccl_env_choice.h"
#include "twinccl/sim/timing.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/preset_family.h"

namespace twinccl::cli {
namespace {

// What to name for a log of `ranks` on `nodes`: the given topology's own preset at that size
// (edits and a fit kept in a file: `--set nodes=N` carries them, topologies/src/topology_regrow.h),
// else an H100 cluster or a file to write.
std::string preset_for(int ranks, int nodes, const topo::Topology& t,
                       const std::string& topo_name) {
  if (const auto family = topo::preset_with_nodes(t.name(), nodes, ranks)) {
    const std::size_t plus = t.name().find('+');
    if (plus == std::string::npos) return *family;
    return fmt::format(
        "{0}; --topology {1} holds {2} node(s) and its edits ({3}): to carry them to {4} "
        "node(s), add --set nodes={4} (it builds {0} with them), or run `twinccl calibrate` "
        "again with --topology {0}",
        *family, topo_name, t.node_count(), t.name().substr(plus + 1), nodes);
  }
  if (nodes > 0 && ranks % nodes == 0 && ranks / nodes == 8) {
    return nodes == 1 ? "dgx-h100 (or dgx-a100)" : fmt::format("h100-cluster-{}", nodes);
  }
  return fmt::format(
      "a topology file with {} node(s) holding {} ranks (start one: `twinccl topo show "
      "h100-cluster-{} --format json -o mine.json`, then edit it; docs/topologies.md)",
      nodes, ranks, std::clamp(nodes, 1, 1024));  // h100-cluster-N: N = 1..1024
}

// The log's ranks must be the first `ranks` GPUs of the topology, on as many nodes as it names.
void check_fits(const sim::NcclTestsTable& log, const topo::Topology& t,
                const std::string& topo_name) {
  const std::string where = fmt::format("{} (table at line {})", log.source, log.first_line);
  if (log.ranks <= 0 || log.nodes <= 0) {
    throw ConfigError(
        where +
        ": the device block ('# Using devices') is missing or truncated, so the log does not say "
        "how many ranks on how many nodes ran; give --ranks N --nodes M");
  }
  if (log.nodes > log.ranks) {
    throw ConfigError(fmt::format("{}: {} nodes for {} ranks; check --ranks / --nodes", where,
                                  log.nodes, log.ranks));
  }
  if (log.ranks > t.gpu_count()) {
    throw ConfigError(
        fmt::format("{}: {} ranks on {} node(s), more than the {} GPUs of --topology {}; use {}",
                    where, log.ranks, log.nodes, t.gpu_count(), topo_name,
                    preset_for(log.ranks, log.nodes, t, topo_name)));
  }
  const int nodes = sim::nodes_spanned(t, log.ranks);
  if (nodes != log.nodes) {
    throw ConfigError(fmt::format(
        "{}: the log ran {} ranks on {} node(s), but the first {} GPUs of --topology {} span {} "
        "node(s); use {} (or --nodes if the log's device block is wrong){}",
        where, log.ranks, log.nodes, log.ranks, topo_name, nodes,
        preset_for(log.ranks, log.nodes, t, topo_name), sim::nvlink_domain_hint(log, nodes)));
  }
  if (!log.kind) {
    throw ConfigError(where + ": " + log.collective +
                      " is not a collective the simulator models; give --collective if "
                      "the log was named wrongly");
  }
}

// A log with no row to compare is an error saying why, not an empty table and exit 0.
void throw_when_nothing_compared(const CompareReport& report) {
  std::string why;
  std::size_t skipped = 0;
  for (const CompareTable& t : report.tables) {
    if (!t.rows.empty()) return;
    for (const sim::NcclTestsSkippedLine& s : t.skipped) {
      if (++skipped <= 3) {
        why += fmt::format("{}{}:{}: {}", why.empty() ? "" : "; ", t.log.source, s.line, s.why);
      }
    }
  }
  throw ConfigError(
      fmt::format("no row of the log(s) could be compared: {} row(s) not compared "
                  "({}{})",
                  skipped, why, skipped > 3 ? "; ..." : ""));
}

void add_summary(std::vector<RegimeSummary>& out, const std::string& source,
                 const std::string& collective, const std::vector<const CompareRow*>& rows) {
  for (SizeRegime regime : {SizeRegime::latency, SizeRegime::middle, SizeRegime::bandwidth}) {
    double log_sum = 0, abs_log_sum = 0;
    int n = 0;
    for (const CompareRow* r : rows) {
      if (r->regime != regime) continue;
      log_sum += std::log(r->ratio);
      abs_log_sum += std::fabs(std::log(r->ratio));
      ++n;
    }
    if (n == 0) continue;
    out.push_back(RegimeSummary{collective, source, regime, n, std::exp(log_sum / n),
                                std::exp(abs_log_sum / n) - 1});
  }
}

// --algo / --proto replace the log's own NCCL_ALGO / NCCL_PROTO, each the variable of its kind
// (NCCL reads them apart): a value in NCCL's syntax becomes the table's, from "--algo"; one of
// twinccl's exact names is no NCCL variable: the table keeps the log's value and records the
// forced name apart (CompareTable::forced_*), the log's variable unread (the request forces the
// name). Returns the choice the rows are predicted with.
sim::LoggedChoice apply_flags(CompareTable& table, const CompareOptions& o) {
  sim::NcclTestsTable& log = table.log;
  table.forced_algorithm = o.algorithm;
  table.forced_protocol = o.protocol;
  struct Flag {
    const std::string &list, &forced;
    const char* option;
    const char* variable;
    std::string &value, &from;
  };
  const Flag flags[] = {
      {o.nccl_lists.algo, o.algorithm, "--algo", "NCCL_ALGO", log.nccl_algo, log.nccl_algo_from},
      {o.nccl_lists.proto, o.protocol, "--proto", "NCCL_PROTO", log.nccl_proto,
       log.nccl_proto_from}};
  std::string shown_from[2], kept[2][2];  // kept: the log's value and line under a forced name
  for (std::size_t i = 0; i < 2; ++i) {
    const Flag& f = flags[i];
    if (f.list.empty() && f.forced.empty()) continue;
    if (f.list.empty()) {
      kept[i][0] = std::exchange(f.value, "");
      kept[i][1] = std::exchange(f.from, "");
      continue;
    }
    shown_from[i] = f.option;
    if (!f.value.empty())
      shown_from[i] += fmt::format("; replaces the log's {}={} ({})", f.variable,
                                   shown_value(f.value, 120), f.from);
    f.value = f.list;
    f.from = f.option;
  }
  const sim::LoggedChoice logged = sim::logged_choice(log);
  for (std::size_t i = 0; i < 2; ++i) {
    if (!shown_from[i].empty()) flags[i].from = shown_from[i];
    if (!flags[i].forced.empty() && flags[i].list.empty()) {
      flags[i].value = kept[i][0];
      flags[i].from = kept[i][1];
    }
  }
  return logged;
}

// perf's note on a pair twinccl's exact names forced that NCCL's own choice never takes there
// (forced_outside_nccl_note; with an NCCL_ALGO list beside a forced protocol, its cloud-profile
// part alone), once per table. `tuner` is the table's, built at its first forced row: what it
// is built from (ranks, ranks per node, software latency, NCCL version) is the log's, the same
// for each of its rows (sim::request_of).
void add_forced_note(CompareTable& table, std::optional<sim::Tuner>& tuner,
                     const topo::Topology& topology, const sim::Request& request,
                     const sim::Prediction& p, bool whole) {
  if (table.forced_algorithm.empty() && table.forced_protocol.empty()) return;
  if (!tuner) {
    tuner.emplace(topology, request.spec.nranks, request.params.ranks_per_node,
                  request.software_latency, request.nccl_version);
  }
  const std::string note = whole ? forced_outside_nccl_note(*tuner, request, p)
                                 : forced_outside_profile_note(*tuner, request, p);
  if (!note.empty() && std::find(table.notes.begin(), table.notes.end(), note) == table.notes.end())
    table.notes.push_back(note);
}

}  // namespace

CompareReport build_compare_report(std::vector<sim::NcclTestsTable> tables,
                                   const topo::Topology& topology, const CompareOptions& o) {
  CompareReport report;
  report.topology = o.topology;
  std::vector<OpKind> collectives;
  for (const sim::NcclTestsTable& t : tables) {
    if (t.kind) collectives.push_back(*t.kind);
  }
  report.restriction = o.nccl_lists.note(collectives);
  report.fidelity = o.fidelity;
  report.in_place = o.in_place;
  const sim::Fidelity fidelity = sim::parse_fidelity(o.fidelity);
  std::optional<sim::Protocol> protocol;
  if (!o.protocol.empty()) protocol = sim::parse_protocol(o.protocol);
  for (sim::NcclTestsTable& log : tables) {
    check_fits(log, topology, o.topology);
    CompareTable table;
    std::vector<sim::NcclTestsRow> rows = std::move(log.rows);
    log.rows.clear();
    table.skipped = std::move(log.skipped);
    log.skipped.clear();
    table.log = std::move(log);
    if (o.gpus_per_thread > 0) table.log.gpus_per_thread = o.gpus_per_thread;  // --gpus-per-thread
    table.nccl_version_note = sim::nccl_version_pricing(table.log).note;
    // The algorithm and protocol the log says it ran (NCCL_ALGO / NCCL_PROTO, nccl_env_choice.h),
    // each replaced by its flag where given.
    const sim::LoggedChoice logged = apply_flags(table, o);
    if (table.log.kind && sim::nccl_tunes(*table.log.kind)) {
      NcclListFlags run;  // the run's NCCL_PROTO, from the log or --proto, over a cloud's profile
      run.proto = logged.nccl_proto_set ? table.log.nccl_proto : "";
      run.proto_flag = o.nccl_lists.proto.empty() ? table.log.nccl_proto_from : "--proto";
      const std::string replaced = profile_replaced_note(run, topology, o.topology);
      if (!replaced.empty()) table.notes.push_back(replaced);
    }
    std::optional<sim::Tuner> tuner;  // for the forced-pair note (add_forced_note)
    const bool forced = !o.algorithm.empty() || protocol.has_value();
    std::vector<RanRow> ran;  // rows NCCL's per-call lines name (compare_ran_note.h)
    std::vector<OffRow> off;  // rows priced with NCCL's choice, off by more than 10%
    std::string ran_from;
    for (sim::NcclTestsRow& row : rows) {
      const std::optional<sim::NcclTestsBlock>& m = o.in_place ? row.in_place : row.out_of_place;
      if (!m || row.count == 0 || m->time_us <= 0) {
        table.skipped.push_back(
            {row.line,
             !m ? fmt::format("its {} columns are blank", o.in_place ? "in-place" : "out-of-place")
             : row.count == 0 ? std::string("count 0 (nothing to predict)")
                              : std::string("a measured time of 0")});
        continue;
      }
      // A row whose count and size disagree cannot be compared: which one is right?
      sim::check_row_size(table.log, row);
      // The pair --algo / --proto force (twinccl's names); else what NCCL's own per-call lines
      // say ran at this size (request_of); else NCCL's choice.
      sim::Request request = sim::request_of(table.log, row, o.in_place);
      if (forced) {
        request.algorithm = o.algorithm;
        request.protocol = protocol;
      }
      request.fidelity = fidelity;
      request.params.channels = o.channels;
      const auto as_ran = [&](const sim::Request& r) {
        return r.algorithm.empty() || row.ran_from.empty() || forced
                   ? std::string()
                   : fmt::format(" as NCCL ran it ({})", row.ran_from);
      };
      const auto price = [&](sim::Request r) {
        try {
          if (o.nccl_lists.any()) {  // refused as perf refuses the lists, naming the option
            sim::apply_nccl_lists(r, logged.algorithms, logged.protocols, logged.nccl_proto_set);
            return predicted_under(o.nccl_lists, [&] { return sim::predict(topology, r); });
          }
          return sim::predict_logged(topology, r, logged, table.log.source);
        } catch (const InvalidArgument& e) {
          throw ConfigError(fmt::format("{}:{}: cannot predict {} count {} on {} ranks of {}{}: {}",
                                        table.log.source, row.line, table.log.collective, row.count,
                                        table.log.ranks, o.topology, as_ran(r), e.what()));
        }
      };
      const sim::Prediction p = price(request);
      const double measured = m->time_us;
      if (row.ran_algorithm.empty() && !forced && !o.nccl_lists.any() && !logged.restricted() &&
          fidelity == sim::Fidelity::analytic) {  // would another NCCL algorithm fit?
        if (auto r = off_row(topology, request, p, measured, row.size_bytes))
          off.push_back(std::move(*r));
      }
      if (!row.ran_algorithm.empty()) {  // beside the simulator's own choice (analytic: cheap)
        if (ran_from.empty()) ran_from = row.ran_from;
        RanRow r{row.size_bytes, sim::label(p), ""};
        if (!forced) {
          sim::Request own = request;
          own.algorithm.clear();
          own.protocol.reset();
          own.fidelity = sim::Fidelity::analytic;
          r.own = sim::label(price(own));
        }
        ran.push_back(std::move(r));
      }
      add_forced_note(table, tuner, topology, request, p, !o.nccl_lists.any());
      CompareRow c;
      c.measured_time_us = m->time_us;
      c.measured_busbw_gbps = m->busbw_gbps;
      c.predicted_time_us = p.time_us;
      c.predicted_busbw_gbps = p.busbw_gbps;
      // one rank: NCCL runs no algorithm, "one_rank/copy" (sim::Prediction::one_rank)
      c.algorithm = p.one_rank.empty() ? p.algorithm : "one_rank";
      c.protocol = p.one_rank.empty() ? std::string(sim::name(p.protocol)) : p.one_rank;
      c.ratio = p.time_us > 0 ? p.time_us / m->time_us : 1.0;
      if (!std::isfinite(c.ratio)) {  // a measured time so small that the ratio overflows
        table.skipped.push_back(
            {row.line,
             fmt::format("a measured time of {:.3g} us: predicted/measured cannot be computed",
                         m->time_us)});
        continue;
      }
      c.regime = size_regime(row.size_bytes);
      c.measured_row = std::move(row);
      table.rows.push_back(std::move(c));
    }
    const std::string ran_note =
        ran_choice_note(ran, table.rows.size(), ran_from, table.log.ran_conflicting, forced);
    if (!ran_note.empty()) table.notes.push_back(ran_note);
    const std::string look_alike = look_alike_note(off, table.rows.size());
    if (!look_alike.empty()) table.notes.push_back(look_alike);
    std::stable_sort(table.skipped.begin(), table.skipped.end(),
                     [](const auto& a, const auto& b) { return a.line < b.line; });
    report.tables.push_back(std::move(table));
  }
  throw_when_nothing_compared(report);
  std::map<std::string, std::vector<const CompareRow*>> by_collective;
  for (const CompareTable& t : report.tables) {
    std::vector<const CompareRow*> rows;
    for (const CompareRow& r : t.rows) rows.push_back(&r);
    add_summary(report.summary, t.log.source, t.log.collective, rows);
    by_collective[t.log.collective].insert(by_collective[t.log.collective].end(), rows.begin(),
                                           rows.end());
  }
  if (report.tables.size() > 1) {
    for (const auto& [collective, rows] : by_collective)
      add_summary(report.summary, "all", collective, rows);
  }
  return report;
}

}  // namespace twinccl::cli
