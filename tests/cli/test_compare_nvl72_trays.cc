// A GB300 NVL72 log with its whole device block names every 4-GPU tray a host, and a gb300-nvl72
// preset's node is the rack's NVLink domain: compare and calibrate refused it by suggesting a
// topology with as many nodes as trays (an h100-cluster). They now say to give --nodes with the
// NVLink domains, and the log reads with it.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_runner.h"

using Catch::Matchers::Contains;
using twinccl_test::run_cli;

namespace {

// oci-gpu-quickstarts' 2-tray GB300 log (tests/fidelity/logs) with the device lines its "..."
// stands for put back (ranks 2-5), as the run printed them: 8 ranks on hosts GPU-5188 and GPU-205.
std::string whole_device_block_log(const twinccl_test::ScratchDir& scratch) {
  std::ifstream in(std::string(TWINCCL_SOURCE_DIR) +
                   "/tests/fidelity/logs/oci-gb300-2tray-1rack-all_reduce-512K-16G.log");
  std::ostringstream out;
  for (std::string line; std::getline(in, line);) {
    if (line != "...") {
      out << line << "\n";
      continue;
    }
    for (int rank = 2; rank < 6; ++rank) {
      out << "#  Rank  " << rank << " Group  0 Pid 1 on " << (rank < 4 ? "GPU-5188" : "GPU-205")
          << " device  " << rank % 4 << " [0008:06:00] NVIDIA GB300\n";
    }
  }
  scratch.write("gb300-2tray.log", out.str());
  return scratch.path("gb300-2tray.log");
}

// An all_reduce log of `ranks` GPUs named `gpu`, `per_host` on each host.
std::string log_of(const twinccl_test::ScratchDir& scratch, int ranks, int per_host,
                   const std::string& gpu) {
  std::string text = "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576\n# Using devices\n";
  for (int rank = 0; rank < ranks; ++rank) {
    text += "#  Rank " + std::to_string(rank) + " Group  0 Pid 1 on host-" +
            std::to_string(rank / per_host) + " device  " + std::to_string(rank % per_host) +
            " [0x53] " + gpu + "\n";
  }
  text +=
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      "  1048576  262144  float  sum  -1  40.0  26.2  49.2  0  39.0  26.9  50.4  0\n";
  scratch.write("all_reduce.log", text);
  return scratch.path("all_reduce.log");
}

}  // namespace

TEST_CASE("an NVL72 log whose hosts are trays is refused with --nodes as the way out",
          "[cli][compare]") {
  const twinccl_test::ScratchDir scratch("twinccl-compare-nvl72");
  const std::string log = whole_device_block_log(scratch);
  const auto refused = run_cli("compare " + log + " --topology gb300-nvl72-cluster-1x8");
  INFO(refused.out);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.out, Contains("the log ran 8 ranks on 2 node(s), but the first 8 GPUs of "
                                   "--topology gb300-nvl72-cluster-1x8 span 1 node(s)"));
  CHECK_THAT(refused.out, Contains("give --nodes 1: the domains they span"));
  const auto read = run_cli("compare " + log + " --topology gb300-nvl72-cluster-1x8 --nodes 1");
  INFO(read.out);
  CHECK(read.exit_code == 0);
  CHECK_THAT(read.out, Contains("8 ranks on 1 node(s)"));
  const auto calibrate = run_cli("calibrate " + log + " --topology gb300-nvl72-cluster-1x8 -o " +
                                 scratch.path("mine.json"));
  INFO(calibrate.out);
  CHECK(calibrate.exit_code == 2);
  CHECK_THAT(calibrate.out, Contains("give --nodes 1: the domains they span"));
}

TEST_CASE("the NVLink domain hint is given only for tray-sized hosts or GB200 / GB300 GPUs",
          "[cli][compare]") {
  // 16 H100 at 8 per host on an NVL72 rack: two hosts are no tray, and --nodes 1 would price the
  // run as one NVLink domain. The refusal stays; the hint goes.
  const twinccl_test::ScratchDir scratch("twinccl-compare-nvl72-hint");
  struct Case {
    int ranks, per_host;
    const char* gpu;
    bool hint;
  };
  for (const Case c :
       {Case{16, 8, "NVIDIA H100 80GB HBM3", false}, Case{8, 4, "NVIDIA H100 80GB HBM3", true},
        Case{16, 8, "NVIDIA GB200", true}}) {
    const std::string log = log_of(scratch, c.ranks, c.per_host, c.gpu);
    const auto refused = run_cli("compare " + log + " --topology gb200-nvl72");
    INFO(c.ranks << " x " << c.gpu << ": " << refused.out);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.out, Contains("span 1 node(s)"));
    CHECK((refused.out.find("the domains they span") != std::string::npos) == c.hint);
  }
}
