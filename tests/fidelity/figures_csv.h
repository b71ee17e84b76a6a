// The held-out published figures as data: tests/fidelity/figures/*.csv, one file per class of
// machine, one nccl-tests row per line (issue 24). Read, checked and turned into model requests
// here; judged by test_figures.cc, which prints the per-class scoreboard.
//
//   FiguresRead r = read_figures_csv(text, "figures/aws-efa.csv");
//   for (const std::string& e : r.errors) FAIL(e);  // "figures/aws-efa.csv:7: band '-1' ..."
//   for (const FigureRow& row : r.rows) use(row.preset, row.bytes, row.measured_us, row.band);
//
// Format (the header line exactly kFiguresHeader; `#` lines and blank lines are comments; a field
// holding a comma is in double quotes, a quote inside it doubled):
//   class: one of figure_classes(); source: short citation (URL in docs/fidelity-sources.md);
//   machine: words; preset: a `twinccl topo list` name; settings: `;`-separated --set edits
//   (`nic_gbps=9;nodes=4`) or empty; collective: all_reduce | all_gather | reduce_scatter |
//   broadcast | reduce | alltoall | sendrecv; bytes: nccl-tests' size column; in_place: 0 or 1;
//   gpus_per_thread: nccl-tests -g (1 = one process per GPU); nccl_version: `2.18.5` or empty (the
//   model's newest); algo: empty (NCCL's choice) or ring | tree | nvls | nvls_tree | pat;
//   measured_us: nccl-tests' time column; band: the asserted |predicted / measured - 1|; reason:
//   why the band is wider than the issue's (10% at >= 64 MiB, 25% below), empty when it is not;
//   `fit: ...` marks a row a constant or a choice of the model was fitted on: it is still
//   asserted within its band, but the scoreboard does not count it as held out.
// Class one-gpu is a one-rank world on the preset's first GPU; every other row runs on every GPU of
// the preset (with its settings applied), as nccl-tests runs one rank per GPU.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace twinccl::fidelity {

inline constexpr std::string_view kFiguresHeader =
    "class,source,machine,preset,settings,collective,bytes,in_place,gpus_per_thread,nccl_version,"
    "algo,measured_us,band,reason";
inline constexpr std::size_t kMiB = std::size_t{1} << 20;

struct FigureRow {
  std::string where;  // "tests/fidelity/figures/aws-efa.csv:7"
  std::string machine_class, source, machine, preset, settings, collective;
  std::size_t bytes = 0;
  bool in_place = false;
  int gpus_per_thread = 1;
  std::string nccl_version;  // "" = the model's newest
  std::string algo;          // "" = NCCL's choice
  double measured_us = 0;
  double band = 0;
  std::string reason;
  // A row the model was fitted on (reason `fit: ...`): asserted, not judged as held out.
  bool fitted_on() const { return reason.rfind("fit: ", 0) == 0; }
};

struct FiguresRead {
  std::vector<FigureRow> rows;
  std::vector<std::string> errors;  // each "FILE:LINE: what is wrong, with the value"
};

// The classes a row may name (the rules of issue 24's held-out figures).
const std::vector<std::string>& figure_classes();

// The issue's band for a size: 0.10 at >= 64 MiB, 0.25 below.
double issue_band(std::size_t bytes);

// One line split at commas outside double quotes ("" inside quotes is one quote). Sets *error
// (and returns what was read) when a quote is not closed or text follows a closing quote.
std::vector<std::string> split_csv_line(std::string_view line, std::string* error);

// Every row of one file's text; `file` names it in the errors. A header other than kFiguresHeader
// is one error and no row is read.
FiguresRead read_figures_csv(std::string_view text, std::string_view file);

// Every *.csv under `dir`, in name order, rows and errors together (the file names as
// `shown_dir`/NAME); a missing directory or one without a .csv is an error.
FiguresRead read_figures_dir(const std::string& dir, const std::string& shown_dir);

}  // namespace twinccl::fidelity
