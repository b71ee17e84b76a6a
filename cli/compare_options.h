// `twinccl compare LOG... --topology T`: what the command line gives (compare_command.cc).
#pragma once

#include <string>
#include <vector>

#include "nccl_list_flags.h"
#include "topology_flags.h"

namespace twinccl::cli {

struct CompareOptions {
  std::vector<std::string> logs;        // nccl-tests stdout logs or -J JSON files
  std::vector<std::string> nccl_debug;  // --nccl-debug: NCCL's debug files (nccl_debug_files.h)
  std::string topology;                 // preset name or topology file
  std::string collective;               // "" = from the log
  int ranks = 0;                        // 0 = from the log's device block
  int nodes = 0;
  // --algo / --proto: twinccl's exact names force; "" = the log's NCCL_ALGO / NCCL_PROTO, else
  // NCCL's choice. Values in NCCL's syntax are moved into nccl_lists (take_nccl_lists): the run's
  // NCCL_ALGO / NCCL_PROTO, each replacing the log's variable of its kind.
  std::string algorithm, protocol;
  NcclListFlags nccl_lists;
  int channels = 0;         // the run's NCCL_MIN_NCHANNELS / NCCL_MIN_CTAS, 0 = NCCL's choice
  int gpus_per_thread = 0;  // nccl-tests -g of the run, 0 = the log's nGpus (1 if absent)
  std::string fidelity = "analytic";
  bool in_place = false;  // measured column: in-place instead of out-of-place
  std::string format = "table";
  TopologyFlags edits;  // --set, --degrade, --fail
};

}  // namespace twinccl::cli
