// Calibration on rows that are not measurements (issue 24's hostile pass): each was fitted,
// silently, before: a garbled row moved the fit and the fitted file was written.
#include <catch2/catch.hpp>

#include "calibrate_sweep.h"
#include "twinccl/errors.h"
#include "twinccl/sim/calibrate.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

using calibrate_test::sweep;

constexpr std::size_t kLargest = std::size_t{1} << 29;  // the sweep's largest row: 512 MiB

// A one-node sweep "measured" on dgx-h100 itself (8 B .. 512 MiB by 4x), each row of up to
// `up_to` bytes and more than `above` edited by `edit`.
template <typename Edit>
std::string error_of(std::size_t above, std::size_t up_to, Edit edit) {
  const topo::Topology t = topo::load_topology("dgx-h100");
  NcclTestsTable log = sweep(t, 8, "1node.log");
  for (NcclTestsRow& r : log.rows) {
    if (r.size_bytes > above && r.size_bytes <= up_to) edit(r);
  }
  try {
    calibrate(t, {log});
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

}  // namespace

TEST_CASE("calibrate: a time below what nccl-tests prints is refused, naming the row",
          "[calibrate][hostile]") {
  // Before: 1e-320 us made the fit NaN (by hand: nvlink_gbps -85.8%, residual +inf%), exit 0.
  for (const double us : {1e-320, 1e-9, 0.001}) {
    INFO(us);
    CHECK_THAT(
        error_of(kLargest / 2, kLargest, [&](NcclTestsRow& r) { r.out_of_place->time_us = us; }),
        Catch::Contains("calibrate: 1node.log:") &&
            Catch::Contains("below the 0.01 us nccl-tests prints"));
  }
}

TEST_CASE("calibrate: a row whose count contradicts its size is refused, as compare refuses it",
          "[calibrate][hostile]") {
  // Before: a row of count 7 was fitted as a bandwidth row predicted for 28 bytes, exit 0 (by
  // hand, a 128 MiB row of a stdout log: nvlink_gbps +14.3% where the log without it gives +19.6%).
  CHECK_THAT(error_of(kLargest / 2, kLargest, [](NcclTestsRow& r) { r.count = 7; }),
             Catch::Contains("1node.log:") &&
                 Catch::Contains("size 536870912 and count 7 float32 contradict each other"));
}

TEST_CASE("calibrate: a fit that ends at the end of its range is refused, naming the row",
          "[calibrate][hostile]") {
  // Before: a 512 MiB row measured in 0.05 us put NVLink at 8 x the preset's (+700%, the search's
  // end) and was written as the fit.
  CHECK_THAT(
      error_of(kLargest / 2, kLargest, [](NcclTestsRow& r) { r.out_of_place->time_us = 0.05; }),
      Catch::Contains("the logs put nvlink_gbps at 2966, 8 x the topology's 370.8") &&
          Catch::Contains("1node.log:") && Catch::Contains("0.05 us measured") &&
          Catch::Contains("give a topology file that describes the machine as --topology") &&
          Catch::Contains("start from the closest preset, `twinccl topo show PRESET [--set K=V "
                          "...] --format json -o mine.json`, then edit it"));
  // A launch 100 x the preset's: host_launch_us at 8 x 5 us.
  CHECK_THAT(error_of(0, 1 << 19, [](NcclTestsRow& r) { r.out_of_place->time_us = 2000.0; }),
             Catch::Contains("the logs put host_launch_us at 40, 8 x the topology's 5"));
}

TEST_CASE("calibrate: more rows than a fit reads are refused before any is predicted",
          "[calibrate][hostile]") {
  // Before: 100000 rows (one log at the reader's cap) took 90 s; ten logs, fifteen minutes.
  const topo::Topology t = topo::load_topology("dgx-h100");
  NcclTestsTable log = sweep(t, 8, "huge.log");
  const NcclTestsRow row = log.rows.back();
  log.rows.assign(10001, row);
  CHECK_THROWS_WITH(calibrate(t, {log}),
                    Catch::Contains("more than 10000 rows over the logs (at huge.log)"));
}

TEST_CASE("calibrate: a log whose nodes are not the topology's is refused, as compare refuses it",
          "[calibrate][hostile]") {
  // Before: `calibrate 1node.log --nodes 3` on dgx-h100 fitted the 8 ranks as one node, exit 0;
  // a 2-node log on a topology of 16-GPU nodes was priced as one node the same way.
  const topo::Topology t = topo::load_topology("dgx-h100");
  NcclTestsTable log = sweep(t, 8, "1node.log");
  log.nodes = 3;
  CHECK_THROWS_WITH(calibrate(t, {log}),
                    Catch::Contains("1node.log: the log ran 8 ranks on 3 node(s), but the first 8 "
                                    "GPUs of topology 'dgx-h100' span 1 node(s)"));
  log.nodes = 1;
  CHECK_NOTHROW(calibrate(t, {log}));
}
