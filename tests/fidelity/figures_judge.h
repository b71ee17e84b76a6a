// A held-out figure (figures_csv.h) predicted with the analytic model as nccl-tests times it, and
// the per-class scoreboard of issue 24 (large >= 64 MiB within 10%, small < 1 MiB within 25%,
// middle within 25%, the worst error, how many are off by more than 2x).
//
//   FigureJudge judge;                                   // keeps each preset + settings loaded
//   Judged j = judge.judge(row);                         // j.error, j.label; j.problem if it threw
//   Scoreboard board; board.add(row, j);
//   board.print(std::cout);                              // a Markdown table, one line per class
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "figures_csv.h"
#include "twinccl/sim/held_out_record.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::fidelity {

// "512 MiB", "8 KiB", "10000000 B": exact, in the largest binary unit that divides.
std::string shown_bytes(std::size_t bytes);

struct Judged {
  double predicted_us = 0;
  double error = 0;     // predicted / measured - 1
  std::string label;    // "nvls/Simple", "p2p", "one_rank/copy"
  std::string problem;  // the model's or the topology's error for this row ("" = predicted)
  // sim::machine_class_of the row's preset, node count and ranks ("" = none): the class
  // `twinccl perf` names beside a prediction, which must be the row's own
  std::string machine_class;
  bool within_band = false;
};

class FigureJudge {
 public:
  // The row predicted on its preset with its settings (topo::parse_setting, apply_edits): the
  // collective at bytes / 4 float32 elements (per rank for all_gather, reduce_scatter, alltoall:
  // nccl-tests' count), in place or not, -g, the NCCL version's choice, the forced algorithm;
  // sendrecv as grouped send/recv rounds (sim::predict_p2p). Never throws: a problem is returned.
  Judged judge(const FigureRow& row);

 private:
  const topo::Topology& topology(const FigureRow& row);
  std::map<std::string, topo::Topology> loaded_;
};

class Scoreboard {
 public:
  void add(const FigureRow& row, const Judged& judged);
  // | class | rows | fitted on | large within 10% | small within 25% | middle within 25% |
  // worst |error| | off by > 2x |, the classes in figure_classes() order (those with rows), then
  // "all". The shares, the worst and the 2x count are over held-out rows only (not fitted on).
  void print(std::ostream& out) const;
  // The classes' counts as sim::held_out_records() keeps them (the record `perf` shows).
  std::vector<sim::HeldOutRecord> records() const;

 private:
  struct Tally {
    int rows = 0, fitted = 0, large = 0, large_in = 0, small = 0, small_in = 0, middle = 0,
        middle_in = 0;
    int off_2x = 0;
    double worst = 0;
    std::string worst_where;
  };
  static void count(Tally& t, const FigureRow& row, const Judged& judged);
  static void print_line(std::ostream& out, const std::string& name, const Tally& t);
  std::map<std::string, Tally> by_class_;
  Tally all_;
};

}  // namespace twinccl::fidelity
