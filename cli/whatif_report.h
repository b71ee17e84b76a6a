// `twinccl whatif`: what one study found (one sweep or one trace on several topologies) and its
// printers: the side-by-side table, CSV, JSON (whatif_report.cc) and the gnuplot plot
// (whatif_plot.cc).
//
//   WhatifStudy s = ...;               // whatif_command.cc fills it
//   print_whatif_table(std::cout, s);  // one row per size, one column group per topology
//   write_whatif_plot(s, "busbw.svg"); // busbw against size, one line per topology
#pragma once

#include <cstddef>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace twinccl::cli {

struct WhatifVariant {
  std::string label;     // the --topology value as given ("dgx-h100 --set nvlink_gbps=600")
  std::string topology;  // the edited topology's name
  int gpus = 0;          // ranks it runs on
  std::vector<std::string> notes;
  std::string held_out;  // sim::held_out_note of its preset ("" = a machine with no record)
};

// One topology at one size (sweep) or on the whole trace (replay).
struct WhatifCell {
  std::size_t bytes = 0;  // nccl-tests' size, rounded to whole elements per rank for this one
  double time_us = 0.0, algbw_gbps = 0.0, busbw_gbps = 0.0;
  std::string algorithm, protocol;
  // replay only
  double comm_us = 0.0, exposed_us = 0.0;
  std::string busiest_link;
};

struct WhatifRow {
  std::size_t bytes = 0;                         // the size asked for (sweep); 0 for a replay
  std::vector<std::optional<WhatifCell>> cells;  // per variant; empty when it cannot split it
};

struct WhatifStudy {
  bool replay = false;  // false: a collective sweep
  std::string subject;  // "all_reduce float32" or the trace file
  std::string fidelity;
  // "NCCL_ALGO=^NVLS (from --algo): ..." when --algo/--proto gave NCCL's syntax; "" = none.
  std::string restriction;
  std::string nccl_algo, nccl_proto;  // those values whole (csv's "# nccl_algo=" line, json)
  std::vector<WhatifVariant> variants;
  std::vector<WhatifRow> rows;  // sweep: one per size; replay: one row
};

// time of a cell / time of the first variant's cell in the same row; nullopt when it cannot be
// computed (either cell missing, or [1] took 0 us): shown as "-", an empty CSV field, JSON null.
std::optional<double> ratio_to_first(const WhatifRow& row, std::size_t variant);

void print_whatif_table(std::ostream& out, const WhatifStudy& study);
void print_whatif_csv(std::ostream& out, const WhatifStudy& study);
void print_whatif_json(std::ostream& out, const WhatifStudy& study);

// Sweep: busbw against size (log2 x), one line per variant; replay: one bar per variant. PNG
// (pngcairo) or SVG by the file's extension. Throws ConfigError when gnuplot is not installed
// (saying how to install it), the extension is neither, or gnuplot fails.
void write_whatif_plot(const WhatifStudy& study, const std::string& path);
// Throws like write_whatif_plot when the plot could not be written (checked before the study runs).
void check_whatif_plot_possible(const std::string& path);

}  // namespace twinccl::cli
