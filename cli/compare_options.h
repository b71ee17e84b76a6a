// `twinccl compare LOG... --topology T`: what the command line gives (compare_command.cc).
#pragma once

#include <string>
#include <vector>

namespace twinccl::cli {

struct CompareOptions {
  std::vector<std::string> logs;  // nccl-tests stdout logs or -J JSON files
  std::string topology;           // preset name or topology file
  std::string collective;         // "" = from the log
  int ranks = 0;                  // 0 = from the log's device block
  int nodes = 0;
  std::string algorithm, protocol;  // "" = NCCL's choice (the simulator's default rule)
  std::string fidelity = "analytic";
  bool in_place = false;  // measured column: in-place instead of out-of-place
  std::string format = "table";
};

}  // namespace twinccl::cli
