// Pieces of nccl-tests' stdout for a parser test: the "# Using devices" block (`ranks` H100s,
// `per_node` a host named node0, node1, ..., one device line per rank as nccl-tests prints them)
// and the current layout's column header.
//
//   parse_nccl_tests_output(twinccl_test::device_block(16, 8) + twinccl_test::kTableHeader + rows,
//                           "run.log");
#pragma once

#include <string>

namespace twinccl_test {

inline const std::string kTableHeader =
    "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";

inline std::string device_block(int ranks, int per_node) {
  std::string s = "# Using devices\n";
  for (int r = 0; r < ranks; ++r) {
    s += "#  Rank " + std::to_string(r) + " Group  0 Pid  1 on node" +
         std::to_string(r / per_node) + " device  " + std::to_string(r % per_node) +
         " [0x07] NVIDIA H100 80GB HBM3\n";
  }
  return s;
}

}  // namespace twinccl_test
