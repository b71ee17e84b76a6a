// `twinccl compare`: each measured nccl-tests row beside the simulator's prediction, and the
// geometric-mean error per collective and size regime.
//
//   CompareReport rep = build_compare_report(tables, topo::load_topology("h100-cluster-2"),
//   options); print_compare_table(std::cout, rep);   // or print_compare_csv / print_compare_json
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "compare_options.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/size_regime.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::cli {

// < 1 MiB, between, >= 64 MiB: sim's regimes, as calibrate judges them (twinccl/sim/size_regime.h).
using sim::size_regime;
using sim::SizeRegime;
inline const char* name(SizeRegime regime) { return sim::regime_name(regime); }

struct CompareRow {
  sim::NcclTestsRow measured_row;
  double measured_time_us = 0, measured_busbw_gbps = 0;
  double predicted_time_us = 0, predicted_busbw_gbps = 0;
  std::string algorithm, protocol;  // the simulator's choice
  double ratio = 1;                 // predicted / measured time
  SizeRegime regime = SizeRegime::latency;
};

struct CompareTable {
  sim::NcclTestsTable log;  // rows moved out into `rows` (log.rows left empty)
  std::vector<CompareRow> rows;
  // Rows not compared, by line, with why: the parser's (a size or count not a whole number) and
  // count 0, time 0, or the measured block printed blank.
  std::vector<sim::NcclTestsSkippedLine> skipped;
  // Where the log's NCCL version is not the one its rows were priced with (older than the
  // model's oldest, unreadable), why and which was used (sim::nccl_version_pricing); "" if none.
  std::string nccl_version_note;
  // twinccl's exact names --algo / --proto forced ("ring", "LL"; "" = none): not NCCL variables,
  // so log.nccl_algo / nccl_proto keep what the run's NCCL_ALGO / NCCL_PROTO were.
  std::string forced_algorithm, forced_protocol;
  // The table's notes, each once: the run's NCCL_PROTO (the log's or --proto's) replacing a cloud
  // profile's (GCP's Simple: profile_replaced_note), and a pair forced by twinccl's exact names
  // that NCCL's own choice never takes there (forced_outside_nccl_note); empty if none.
  std::vector<std::string> notes;
};

// Geometric means over the rows of one (collective, regime), one table or all tables ("all").
struct RegimeSummary {
  std::string collective, source;
  SizeRegime regime = SizeRegime::latency;
  int rows = 0;
  double ratio = 1;   // geometric mean of predicted / measured; error = ratio - 1
  double spread = 0;  // geometric mean of max(r, 1/r), minus 1: how far off a row typically is
};

struct CompareReport {
  std::string topology, fidelity;
  bool in_place = false;
  // --algo / --proto in NCCL's syntax: NcclListFlags::note; "" when neither is.
  std::string restriction;
  std::vector<CompareTable> tables;
  std::vector<RegimeSummary> summary;
};

// Predicts every row on `topology` with each table's rank count; ConfigError when the log's
// ranks or nodes do not fit the topology (naming a preset that fits), or when no row of any table
// can be compared (saying why for the first ones).
CompareReport build_compare_report(std::vector<sim::NcclTestsTable> tables,
                                   const topo::Topology& topology, const CompareOptions& options);

// One line per row not compared: "twinccl: warning: run.log:16: not compared: the size '1P' ...",
// at most `max_lines` per table, then how many more.
void print_compare_warnings(std::ostream& err, const CompareReport& report,
                            std::size_t max_lines = 20);
void print_compare_table(std::ostream& out, const CompareReport& report);
void print_compare_csv(std::ostream& out, const CompareReport& report);
void print_compare_json(std::ostream& out, const CompareReport& report);

}  // namespace twinccl::cli
