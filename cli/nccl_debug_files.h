// `--nccl-debug FILE` of `compare` and `calibrate`: NCCL's own debug output of the run, whose
// per-call lines (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING, NCCL 2.20 and later) say which
// algorithm and protocol NCCL ran at each size (twinccl/sim/nccl_ran_choice.h); the rows are then
// priced as they ran. For a log whose rows NCCL's lines would land inside (no launcher tag), the
// run writes them apart with NCCL_DEBUG_FILE (rank 0's file holds them).
//
//   add_nccl_debug_option(cmd, o.nccl_debug);
//   apply_nccl_debug_files(tables, o.nccl_debug);   // rows' ran_algorithm / ran_protocol
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "twinccl/sim/nccl_tests_log.h"

namespace twinccl::cli {

void add_nccl_debug_option(CLI::App* cmd, std::vector<std::string>& files);

// Reads every file and applies its per-call lines to every table (a line naming a collective to
// that collective's tables). ConfigError naming the file when it holds no such line, or when none
// of its lines names a size of the logs.
void apply_nccl_debug_files(std::vector<sim::NcclTestsTable>& tables,
                            const std::vector<std::string>& files);

}  // namespace twinccl::cli
