// nccl-tests' stdout of a run that forced NCCL_ALGO=Ring, for the tests that read such a log
// (tests/cli/test_compare.cc, tests/sim/test_calibrate_forced_algo.cc):
//
//   const std::string text = twinccl_test::forced_ring_log("node-b", "Simple");
//
// Two H100 ranks, the second on `second_host` (device 1 beside rank 0, else device 0); one 8-byte
// float sum all_reduce row (30.10 us out of place, 30.00 in place). NCCL's INFO line "NCCL_ALGO set
// by environment to Ring" is line 6; with `proto`, line 7 sets NCCL_PROTO the same way (tuning.cc's
// wording).
#pragma once

#include <string>

namespace twinccl_test {

inline std::string forced_ring_log(const std::string& second_host = "node-a",
                                   const std::string& proto = "") {
  std::string text =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor)\n#\n# Using devices\n"
      "#  Rank  0 Group  0 Pid  1 on     node-a device  0 [0x19] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid  2 on     " +
      second_host + " device  " + (second_host == "node-a" ? "1" : "0") +
      " [0x19] NVIDIA H100 80GB HBM3\n"
      "node-a:1:1 [0] NCCL INFO NCCL_ALGO set by environment to Ring\n";
  if (!proto.empty())
    text += "node-a:1:1 [0] NCCL INFO NCCL_PROTO set by environment to " + proto + "\n";
  return text +
         "#       size         count      type   redop    root     time   algbw   busbw #wrong"
         "     time   algbw   busbw #wrong\n"
         "           8             2     float     sum      -1    30.10    0.00    0.00      0"
         "    30.00    0.00    0.00      0\n";
}

}  // namespace twinccl_test
