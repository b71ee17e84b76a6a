// The nccl-tests table: one row per size, out-of-place and in-place columns, and the footer.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "twinccl/data_type.h"
#include "twinccl/operation.h"
#include "twinccl/reduce_op.h"

namespace twinccl::cli {

struct Measurement {
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  std::optional<long long> wrong;  // nullopt: not checked ("N/A")
};

struct PerfRow {
  OpKind kind;
  std::size_t bytes;
  std::size_t count;
  DataType dtype;
  ReduceKind op;
  int root;  // -1 when the collective has none
  Measurement out_of_place, in_place;
  std::string algorithm, protocol;  // chosen (empty when not known)
  // Measured runs with --topology: the simulator's prediction for the same call, side by side.
  std::optional<Measurement> predicted;
  std::string predicted_choice;  // "nvls/Simple"
};

struct PerfReport {
  std::string title;  // "# twinccl perf: all_reduce on 8 emulated ranks"
  std::vector<std::string> header_lines;
  std::vector<PerfRow> rows;
  std::string footer;  // printed after the table (busiest links, trace file)
};

// Fills algbw/busbw from time with nccl-tests' formulas.
Measurement make_measurement(OpKind kind, std::size_t count, DataType dtype, int nranks, double time_us,
                             std::optional<long long> wrong);

void print_table(std::ostream& out, const PerfReport& report);
void print_csv(std::ostream& out, const PerfReport& report);
void print_json(std::ostream& out, const PerfReport& report);

}  // namespace twinccl::cli
