// `twinccl perf --nccl-version X.Y.Z` ranks as that NCCL's tuning model did (sim::Request
// nccl_version): NCCL 2.26.2 runs NVLS-tree on 4 nodes of 8 H100s at 4 MiB, the newest model
// tree/LL128 (tests/sim/test_nccl_version_rank.cc works both out by hand); a version that is not
// one is refused with its value.
#include <catch2/catch.hpp>
#include <string>

#include "cli/cli_runner.h"

using twinccl_test::run_cli;

namespace {
// The algorithm/protocol column of perf's one row.
std::string chosen(const std::string& out) {
  for (const char* pair : {"nvls_tree/Simple", "tree/LL128"}) {
    if (out.find(pair) != std::string::npos) return pair;
  }
  return "(none)";
}
}  // namespace

TEST_CASE("perf --nccl-version ranks as that NCCL", "[cli][perf][version]") {
  const std::string perf = "perf all_reduce --topology h100-cluster-4 -b 4M -e 4M -c 0";
  const auto newest = run_cli(perf);
  INFO(newest.out);
  REQUIRE(newest.exit_code == 0);
  CHECK(chosen(newest.out) == "tree/LL128");
  const auto old = run_cli(perf + " --nccl-version 2.26.2");
  INFO(old.out);
  REQUIRE(old.exit_code == 0);
  CHECK(chosen(old.out) == "nvls_tree/Simple");
  const auto bad = run_cli(perf + " --nccl-version 2.8.4");
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.out, Catch::Contains("--nccl-version 2.8.4"));
  const auto garbage = run_cli(perf + " --nccl-version latest");
  CHECK(garbage.exit_code != 0);
  CHECK_THAT(garbage.out, Catch::Contains("not an NCCL version"));
}
