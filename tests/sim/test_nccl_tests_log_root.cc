// A row whose root is not one of its table's ranks is refused where it would be priced
// (request_of), naming the file, the line and the values, as a size that contradicts its count
// is (check_row_size); before, it was priced silently as root 0.
#include <catch2/catch.hpp>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/timing.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

NcclTestsTable broadcast_with_root(int root) {
  const std::string log =
      "# Collective test starting: broadcast_perf\n"
      "# Using devices\n"
      "#  Rank  0 Group 0 Pid 1 on node-a device 0 [0x19] H100\n"
      "#  Rank  1 Group 0 Pid 1 on node-a device 1 [0x19] H100\n"
      "#  size  count  type  redop  root  time  algbw  busbw  #wrong  time  algbw  busbw  #wrong\n"
      "  8  2  float  none  " +
      std::to_string(root) + "  20.0  0.00  0.00  0  20.0  0.00  0.00  0\n";
  return parse_nccl_tests_output(log, "run.log").front();
}

}  // namespace

TEST_CASE("a root past the table's ranks is refused with file, line and values",
          "[nccl_tests_log][root]") {
  const NcclTestsTable bad = broadcast_with_root(5);
  REQUIRE(bad.ranks == 2);
  CHECK_THROWS_AS(request_of(bad, bad.rows.front()), ConfigError);
  CHECK_THROWS_WITH(request_of(bad, bad.rows.front()),
                    Catch::Contains("run.log:6: root 5 is not one of the table's 2 ranks (0..1)") &&
                        Catch::Contains("--ranks"));
  const NcclTestsTable good = broadcast_with_root(1);
  CHECK(request_of(good, good.rows.front()).spec.root == 1);
}
