// `--nccl-debug FILE` (nccl_debug_files.h).
#include "nccl_debug_files.h"

#include <fmt/format.h>

#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/input_file.h"
#include "twinccl/sim/nccl_ran_choice.h"

namespace twinccl::cli {

void add_nccl_debug_option(CLI::App* cmd, std::vector<std::string>& files) {
  cmd->add_option(
      "--nccl-debug", files,
      "NCCL's debug output of the run (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING, NCCL 2.20 on; "
      "its NCCL_DEBUG_FILE of rank 0): price each size with the algorithm and protocol it says "
      "NCCL ran (the log's own such lines are read without it); repeatable");
}

void apply_nccl_debug_files(std::vector<sim::NcclTestsTable>& tables,
                            const std::vector<std::string>& files) {
  for (const std::string& path : files) {
    const std::vector<sim::NcclRanChoice> choices = sim::read_nccl_ran_choices(
        read_input_file("NCCL debug file", path, sim::kNcclTestsMaxBytes), path);
    if (choices.empty()) {
      throw ConfigError(fmt::format(
          "{}: no line of NCCL's per-call choices ('AllReduce: 1048576 Bytes -> Algo RING proto "
          "LL128 ...'); NCCL writes them with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING (2.20 and "
          "later), on rank 0: give rank 0's file of NCCL_DEBUG_FILE=nccl.%h.%p.log",
          shown_value(path, 200)));
    }
    int named = 0;
    for (sim::NcclTestsTable& t : tables) named += sim::apply_nccl_ran_choices(t, choices).named;
    if (named == 0) {
      throw ConfigError(fmt::format(
          "{}: its {} distinct per-call choice(s) name no size of the logs' rows (first: {} "
          "bytes, {}); is it the same run's debug output?",
          shown_value(path, 200), choices.size(), choices.front().bytes, choices.front().from));
    }
  }
}

}  // namespace twinccl::cli
