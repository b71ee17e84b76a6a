// The nccl-tests table, line for line as nccl-tests 2.19 prints it: per collective the "#
// Collective test starting" line, the "# nThread ..." line, the "# Using devices" block, the
// three-line column header, one row per size (%12li sizes, nccl-tests' number widths, its type and
// op names, the per-rank count for all_gather/reduce_scatter/alltoall/gather/scatter), the footer
// ("# Out of bounds values : N OK", "# Avg bus bandwidth : X" over both columns) and "# Collective
// test concluded". TwinCCL's own columns (algorithm/protocol, the prediction) follow each row's
// thirteen nccl-tests fields unless --plain.
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
  std::size_t bytes;  // nccl-tests' size: the largest buffer of a rank
  std::size_t count;  // nccl-tests' count: per rank for the gathered/scattered collectives
  DataType dtype;
  ReduceKind op;
  int root;  // -1 when the collective has none
  Measurement out_of_place, in_place;
  std::string algorithm, protocol;  // chosen (empty when not known)
  // Measured runs with --topology: the simulator's prediction for the same call, side by side.
  std::optional<Measurement> predicted;
  std::string predicted_choice;  // "nvls/Simple"
  std::string timestamp;         // -S 1
  // Predicted rows checked on the emulator: the algorithm it ran for #wrong ("" = not checked).
  std::string checked_algorithm;
};

// What nccl-tests prints about the run before the table (and -J writes as "config").
struct RunConfig {
  int nthreads = 1, ngpus = 1;
  std::size_t min_bytes = 0, max_bytes = 0;
  double factor = 0;           // > 1: step: F(factor)
  std::size_t step_bytes = 0;  // else step: S(bytes)
  int warmup = 0, iterations = 0, agg_iters = 1, validation = 1, graph = 0, unalign = 0;
  int blocking = 0;  // -z
  bool cputime = false, timestamps = false, plain = false;
  struct Device {
    int rank, device;
    std::string host, name;
  };
  std::vector<Device> devices;
  int pid = 0;
  std::vector<std::string> notes;  // "# ..." lines after the nThread line
};

struct PerfReport {
  std::string title;  // "# twinccl perf: all_reduce on 8 emulated ranks"
  std::vector<std::string> header_lines;
  RunConfig config;
  int nranks = 0;
  std::vector<PerfRow> rows;
  std::string footer;  // printed after the tables (busiest links, trace file)
  // --algo / --proto read as NCCL_ALGO / NCCL_PROTO (sim), whole; "" = none: csv's leading
  // "# nccl_algo=...,nccl_proto=..." line and json's "nccl_algo" / "nccl_proto" fields.
  std::string nccl_algo, nccl_proto;
};

// nccl-tests' names: "float", "half", "bfloat16", "f8e4m3"...; "mulsum" for premul_sum;
// "alltoall_perf" for all_to_all.
std::string_view nccl_tests_type(DataType t);
std::string_view nccl_tests_op(ReduceKind k);
// A row's redop column: the op for reductions and sendrecv, "none" for the other collectives,
// "" for hypercube (nccl-tests prints it blank).
std::string_view nccl_tests_redop(const PerfRow& row);
std::string nccl_tests_program(OpKind k);

// Fills algbw/busbw from time with nccl-tests' formulas (gather and scatter: (n-1)/n).
Measurement make_measurement(OpKind kind, std::size_t count, DataType dtype, int nranks,
                             double time_us, std::optional<long long> wrong);

// nccl-tests' number field: %.2f, then %.1f, %.0f, %e as the value outgrows the width.
std::string nccl_tests_number(double value, int width);

// One table per collective, in the order of the rows.
void print_table(std::ostream& out, const PerfReport& report);
void print_csv(std::ostream& out, const PerfReport& report);
void print_json(std::ostream& out, const PerfReport& report);
// nccl-tests' -J file (schema version 3) for the rows of one collective; args is the command line.
void write_nccl_tests_json(std::ostream& out, const PerfReport& report, OpKind kind,
                           const std::vector<std::string>& args);

}  // namespace twinccl::cli
