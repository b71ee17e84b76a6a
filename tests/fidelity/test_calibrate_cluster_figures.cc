// `twinccl calibrate` on clusters published as figures (busbw or egrep'd rows, no whole log) from
// 1 node to 8 - 64 nodes: fit on the 1- and 2-node all_reduce figures, judge the fit on all_reduce,
// all_gather and reduce_scatter at 4 - 64 nodes, which it did not see (provenance:
// docs/fidelity-sources.md, "Together AI's B200 clusters, 1 - 64 nodes" and "AMD (RCCL), held
// out").
//  * Together's flapping-airplanes (B200, 8 x 400G NDR, NCCL 2.28.9, `-g 8`), 1 - 64 nodes at 32
//    GiB, and 4 nodes at 8 GiB two months later (NCCL 2.30.7): the 4 - 64-node rows within 10%
//    after the fit, as before it (the fit moves NVLink, on the 1-node NVLS row; the 2-node
//    NVLS-tree row keeps the NIC at line rate; the held-out rows are NIC-bound ring rows).
//  * Together's use3a-ss (B200, NCCL 2.29.7, `-g 1`), 1 - 46 nodes at 16 GiB: its 2-node NVLS-tree
//    row fits the NICs at line rate too, but its ring traffic from 2 nodes is 12 - 24% slower than
//    that: the 4 - 46-node rows stay that far off (docs/fidelity.md, "the data round"). Fitted on
//    its 2-node **ring** run instead, priced as the ring it was (NCCL_ALGO=Ring), the NICs move
//    to 43.9 GB/s and 11 of those 12 rows come within 10% (docs/fidelity.md, "Calibration from
//    forced-algorithm logs").
//  * AMD's AAC11 (MI325X, RoCE, RCCL ring forced), 1 / 2 / 4 / 8 nodes at 4 - 16 GiB: the 2-node
//    ring rows take the NIC rate one speed step down, and the 4- and 8-node rows go from -7..-8%
//    to -1..-2%.
// Each figure becomes one nccl-tests row, time = size x busbw factor / busbw (nccl-tests' own
// relation), so calibrate reads what it would read from the log.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "calibrate_figures.h"
#include "twinccl/sim/calibrate.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;
using namespace twinccl_test::calibrate_figures;

TEST_CASE("calibrate on Together's flapping-airplanes B200 cluster: 1 + 2 nodes, 4-64 nodes") {
  // 2026-05-12 report, 32 GiB: the 1-node run with NVLS enabled and no algorithm forced (NCCL
  // chose NVLS), the 2-node NVLS-tree run (NCCL's choice there too: use3a-ss's "auto" and
  // NVLS-tree columns are the same figure).
  const std::vector<Figure> fit = {{"all_reduce", "", 1, 32 * kGiB, 844.35},
                                   {"all_reduce", "nvls_tree", 2, 32 * kGiB, 719.70}};
  const topo::Topology preset = topo::load_topology("b200-cluster-64");
  const std::vector<NcclTestsTable> logs = logs_of(fit, 8, "2.28.9");
  for (const NcclTestsTable& log : logs) {
    // The fit reads NCCL's choice; it is the run's algorithm on both rows.
    const Prediction p = predict(preset, request_of(log, log.rows[0]));
    CHECK(p.algorithm == (log.nodes == 1 ? "nvls" : "nvls_tree"));
  }
  const Calibration c = calibrate(preset, logs, {.latencies = false});
  const CalibratedParameter& nvlink = parameter(c, "nvlink_gbps");
  const CalibratedParameter& nic = parameter(c, "nic_gbps");
  INFO("nvlink_gbps " << nvlink.before << " -> " << nvlink.after << "; nic_gbps " << nic.before
                      << " -> " << nic.after << " (" << nic.not_determined << ")");
  // NVLink from the 1-node NVLS row (+2.1%); the NIC rate from the 2-node NVLS-tree row, whose
  // 719.7 GB/s busbw is what 8 x 400G give it: the preset's 50 GB/s stays (NCCL's speed steps).
  CHECK(nvlink.not_determined.empty());
  CHECK(nvlink.after / nvlink.before == Approx(1.02).margin(0.02));
  CHECK(nic.not_determined.empty());
  CHECK(nic.after == Approx(nic.before).epsilon(0.02));

  // Held out: ring all_reduce, all_gather (ring, and NCCL's choice with NVLS on) at 4 - 64 nodes,
  // 32 GiB (2026-05-12); ring all_reduce, all_gather, reduce_scatter at 4 nodes, 8 GiB, NCCL 2.30.7
  // (2026-07-11, the same cluster after its HCA list was fixed).
  std::vector<Figure> judged = {
      {"all_reduce", "ring", 4, 32 * kGiB, 389.30},  {"all_reduce", "ring", 8, 32 * kGiB, 389.20},
      {"all_reduce", "ring", 16, 32 * kGiB, 388.30}, {"all_reduce", "ring", 32, 32 * kGiB, 389.98},
      {"all_reduce", "ring", 64, 32 * kGiB, 389.81}, {"all_gather", "ring", 4, 32 * kGiB, 376.91},
      {"all_gather", "ring", 8, 32 * kGiB, 380.62},  {"all_gather", "ring", 16, 32 * kGiB, 382.83},
      {"all_gather", "ring", 32, 32 * kGiB, 378.50}, {"all_gather", "ring", 64, 32 * kGiB, 380.15},
      {"all_gather", "", 4, 32 * kGiB, 376.97},      {"all_gather", "", 8, 32 * kGiB, 378.23},
      {"all_gather", "", 16, 32 * kGiB, 380.38},     {"all_gather", "", 32, 32 * kGiB, 383.22},
      {"all_gather", "", 64, 32 * kGiB, 382.64}};
  const auto within_10 = [](const Figure&, double, double after) {
    CHECK(std::abs(after) <= 0.10);
    return true;
  };
  GeoMean mean;
  judge(preset, c.topology, judged, 8, "2.28.9", mean, within_10);
  const std::vector<Figure> july = {{"all_reduce", "ring", 4, 8 * kGiB, 384.0},
                                    {"all_gather", "ring", 4, 8 * kGiB, 376.2},
                                    {"reduce_scatter", "ring", 4, 8 * kGiB, 384.1}};
  judge(preset, c.topology, july, 1, "2.30.7", mean, within_10);
  INFO("geometric mean over the " << mean.rows << " held-out rows: " << mean.value() * 100 << "%");
  CHECK(mean.rows == 18);
  CHECK(std::abs(mean.value()) <= 0.03);  // +0.8% when written; the rows alone allow 10%
}

TEST_CASE("calibrate on Together's use3a-ss B200 cluster: NICs fit at 2 nodes, 4-46 nodes slower") {
  // 2026-05-02 report (re-run table), 16 GiB, `-g 1`: NCCL's choice with NVLS on ("NVLS" column).
  const std::vector<Figure> fit = {{"all_reduce", "", 1, 16 * kGiB, 840.8},
                                   {"all_reduce", "", 2, 16 * kGiB, 717.2}};
  const topo::Topology preset = topo::load_topology("b200-cluster-46");
  const Calibration c = calibrate(preset, logs_of(fit, 1, "2.29.7"), {.latencies = false});
  for (const Figure& f : fit) {  // the fitted rows themselves
    const double after = error_of(c.topology, f, 1, "2.29.7");
    INFO(f.nodes << " nodes: " << after * 100 << "%");
    CHECK(std::abs(after) <= 0.03);
  }
  // The 2-node run is NVLS-tree at 717 GB/s busbw, as on flapping-airplanes: the NICs fit at line
  // rate. Its ring runs do not reach it (2 nodes: 344.7 GB/s where flapping-airplanes reaches 388),
  // and from 4 nodes NCCL chooses ring (its "NVLS" column equals the ring one): 335 down to 291
  // GB/s at 46 nodes, where the preset's 8 x 400G give ~390. No 1- or 2-node row of NCCL's choice
  // shows that, so the calibrated model stays 12 - 24% fast there (the same rows, held out and
  // uncalibrated, are in tests/fidelity/figures/ib-multinode.csv with that reason).
  const CalibratedParameter& nic = parameter(c, "nic_gbps");
  CHECK(nic.not_determined.empty());
  CHECK(nic.after == Approx(nic.before).epsilon(0.02));
  const std::vector<Figure> judged = {
      {"all_reduce", "", 4, 16 * kGiB, 334.7},      {"all_reduce", "", 8, 16 * kGiB, 306.8},
      {"all_reduce", "", 16, 16 * kGiB, 306.4},     {"all_reduce", "", 32, 16 * kGiB, 305.2},
      {"all_reduce", "", 46, 16 * kGiB, 291.4},     {"all_reduce", "ring", 4, 16 * kGiB, 334.8},
      {"all_reduce", "ring", 46, 16 * kGiB, 291.4}, {"all_gather", "", 4, 16 * kGiB, 323.5},
      {"all_gather", "", 8, 16 * kGiB, 308.8},      {"all_gather", "", 16, 16 * kGiB, 306.5},
      {"all_gather", "", 32, 16 * kGiB, 300.7},     {"all_gather", "ring", 4, 16 * kGiB, 323.9}};
  GeoMean mean;
  judge(preset, c.topology, judged, 1, "2.29.7", mean,
        [](const Figure&, double before, double after) {
          CHECK(std::abs(after) <= 0.25);                      // the band of their CSV rows
          CHECK(std::abs(after) <= std::abs(before) + 0.005);  // the fit does not make them worse
          return true;
        });
  INFO("geometric mean over the " << mean.rows << " held-out rows: " << mean.value() * 100 << "%");
  CHECK(std::abs(mean.value()) <= 0.20);  // -18.2% when written; the rows alone allow 25%
}

TEST_CASE("calibrate on use3a-ss with its 2-node ring run (NCCL_ALGO=Ring): the ring rows follow") {
  // The same cluster, fitted on the 1-node row of NCCL's choice and the 2-node **ring** run of the
  // same report (344.7 GB/s busbw; its log would print "NCCL_ALGO set by environment to Ring"):
  // priced as the ring it was, it moves the NICs, which NCCL's 2-node NVLS-tree row cannot.
  const std::vector<Figure> fit = {{"all_reduce", "", 1, 16 * kGiB, 840.8},
                                   {"all_reduce", "ring", 2, 16 * kGiB, 344.7}};
  const topo::Topology preset = topo::load_topology("b200-cluster-46");
  const Calibration c =
      calibrate(preset, logs_of(fit, 1, "2.29.7", /*algo_as_logged=*/true), {.latencies = false});
  const CalibratedParameter& nic = parameter(c, "nic_gbps");
  INFO("nic_gbps " << nic.before << " -> " << nic.after << " (" << nic.not_determined << ")");
  CHECK(nic.not_determined.empty());
  const std::vector<Figure> judged = {{"all_reduce", "", 4, 16 * kGiB, 334.7},
                                      {"all_reduce", "", 8, 16 * kGiB, 306.8},
                                      {"all_reduce", "", 16, 16 * kGiB, 306.4},
                                      {"all_reduce", "", 32, 16 * kGiB, 305.2},
                                      {"all_reduce", "", 46, 16 * kGiB, 291.4},
                                      {"all_reduce", "ring", 4, 16 * kGiB, 334.8},
                                      {"all_reduce", "ring", 46, 16 * kGiB, 291.4},
                                      {"all_gather", "", 4, 16 * kGiB, 323.5},
                                      {"all_gather", "", 8, 16 * kGiB, 308.8},
                                      {"all_gather", "", 16, 16 * kGiB, 306.5},
                                      {"all_gather", "", 32, 16 * kGiB, 300.7},
                                      {"all_gather", "ring", 4, 16 * kGiB, 323.9},
                                      {"all_reduce", "nvls_tree", 4, 16 * kGiB, 288.9},
                                      {"all_reduce", "nvls_tree", 8, 16 * kGiB, 274.3},
                                      {"all_reduce", "nvls_tree", 46, 16 * kGiB, 274.9}};
  // Measured before the test was written (predicted / measured - 1, preset -> fitted): the 12 rows
  // of the previous test -12.4..-23.8% -> +0.0..-12.9% (11 within 10%; 46 nodes -12.9%); NVLS-tree
  // forced at 4 / 8 / 46 nodes -24.5 / -28.3 / -28.1% -> -13.8 / -18.1 / -17.8% (its own
  // deficit beyond the ring's stays: docs/fidelity.md). NIC 50 -> 43.9 GB/s.
  CHECK(nic.after < 0.9 * nic.before);
  // One multi-node count and a 46-node topology: calibrate says the rate is carried there
  // unchecked (these rows show why) and names the sweeps that would check it.
  INFO(c.beyond_the_logs);
  CHECK_THAT(c.beyond_the_logs,
             Catch::Contains("fitted on 2 nodes") && Catch::Contains("topology's 46 nodes") &&
                 Catch::Contains("on 4 and 8 nodes too") && Catch::Contains("mpirun -np 32 -N 8"));
  int within = 0;
  GeoMean mean;  // over the 12 ring / NCCL's-choice rows
  judge(preset, c.topology, judged, 1, "2.29.7", mean,
        [&within](const Figure& f, double before, double after) {
          CHECK(std::abs(after) < std::abs(before));  // every held-out row closer
          const bool nvls_tree = std::string(f.algorithm) == "nvls_tree";
          CHECK(std::abs(after) <= (nvls_tree ? 0.20 : 0.13));
          if (nvls_tree) return false;
          within += std::abs(after) <= 0.10;
          return true;
        });
  CHECK(mean.rows == 12);
  CHECK(within >= 11);  // of the 12 (0 before the fit)
  INFO("geometric mean over the 12: " << mean.value() * 100 << "%");
  CHECK(std::abs(mean.value()) <= 0.08);
}

TEST_CASE("calibrate on AMD's AAC11 MI325X cluster: ring fitted on 1 + 2 nodes, 4 and 8 nodes") {
  // hisohara/ai-scripts AAC11: the first 1, 2, 4 and 8 nodes of one Slurm allocation, RCCL of ROCm
  // 6.4.1, NCCL_ALGO=Ring, `-g 1`; only the 4 / 8 / 16 GiB rows were published (an egrep of the
  // log), as busbw and time: the busbw figures here, the times in amd-1node.csv /
  // amd-multinode.csv.
  const auto rows = [](int nodes, double b4, double b8, double b16) {
    return std::vector<Figure>{{"all_reduce", "ring", nodes, 4 * kGiB, b4},
                               {"all_reduce", "ring", nodes, 8 * kGiB, b8},
                               {"all_reduce", "ring", nodes, 16 * kGiB, b16}};
  };
  const topo::Topology preset = topo::load_topology("mi325x-roce-8");
  std::vector<NcclTestsTable> logs;
  for (const auto& run : {rows(1, 316.88, 318.37, 319.08), rows(2, 347.23, 349.20, 350.24)}) {
    NcclTestsTable t = table_of(run[0], 1, "");
    for (std::size_t i = 1; i < run.size(); ++i) t.rows.push_back(table_of(run[i], 1, "").rows[0]);
    // The fit reads NCCL's (RCCL's) choice: ring, the run's forced algorithm, on every row.
    for (const NcclTestsRow& row : t.rows)
      CHECK(predict(preset, request_of(t, row)).algorithm == "ring");
    logs.push_back(t);
  }
  const Calibration c = calibrate(preset, logs, {.latencies = false});
  const CalibratedParameter& nvlink = parameter(c, "nvlink_gbps");
  const CalibratedParameter& nic = parameter(c, "nic_gbps");
  INFO("nvlink_gbps " << nvlink.before << " -> " << nvlink.after << "; nic_gbps " << nic.before
                      << " -> " << nic.after << " " << nic.not_determined);
  // Ring rows see both rates: the 1-node rows (5.5% faster than the preset's xGMI) take NVLink down
  // (48 -> 45.5 GB/s), the 2-node rows (9% slower than its 8 x 400G) take the NIC one step down
  // NCCL's speed list (50 -> 48 GB/s), and the NICs' share takes what the step leaves.
  CHECK(nvlink.not_determined.empty());
  CHECK(nic.not_determined.empty());
  CHECK(nic.after < 0.98 * nic.before);
  const CalibratedParameter& share = parameter(c, "nic_delivered_share");
  INFO("nic_delivered_share " << share.after << ": " << share.fitted_on);
  CHECK(share.after < 0.98);
  GeoMean mean;
  for (const auto& run : {rows(4, 348.12, 349.92, 350.59), rows(8, 344.13, 349.98, 350.84)}) {
    judge(preset, c.topology, run, 1, "", mean, [](const Figure&, double before, double after) {
      CHECK(std::abs(after) <= 0.10);
      // the 2-node ring rows' NIC rate carries: every row 2 points or more closer (3 before the
      // preset priced the EPYC hosts' 2 us network posts, which took 0.6 - 1.8 points of the
      // error itself: 8 nodes 4 GiB -5.4% -> +2.9%)
      CHECK(std::abs(after) < std::abs(before) - 0.02);
      return true;
    });
  }
  INFO("geometric mean over the " << mean.rows << " held-out rows: " << mean.value() * 100 << "%");
  CHECK(mean.rows == 6);
  // +1.5% with the NICs' share the 2-node rows fit after the step (+1.0% before the EPYC hosts'
  // network post, -1.6% with the step alone);
  // the rows alone allow 10%
  CHECK(std::abs(mean.value()) <= 0.04);
}
