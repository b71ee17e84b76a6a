// Held-out figures on the clusters clouds rent (issue 24): published nccl-tests/rccl-tests
// all_reduce rows on AWS EFA, GCP TCPXO, AMD RoCE and GB200 NVL72 machines that no constant of the
// model was fitted to, predicted on
// the cloud presets (topologies/presets/cloud_clusters.cc) as nccl-tests times them (one GPU per
// process). Each row is within the band (10% at >= 64 MiB, 25% below 1 MiB) or within a
// residual band whose reason docs/fidelity.md gives ("Clouds, held out"), so the test fails if
// the model drifts further. Sources: docs/fidelity-sources.md ("Clouds") and, for the GCP log,
// tests/fidelity/logs/SOURCES.md.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kMiB = std::size_t{1} << 20;

struct CloudFigure {
  const char* source;
  const char* topology;
  std::size_t bytes;
  double measured_time_us;  // out-of-place
  double band;
  const char* residual;  // "" = the band
};

const char* const kTcpxo =
    "GCP TCPXO: NCCL's IB per-message latency stands in for TCPXO's, which no public source "
    "gives; small calls are 4x too fast (docs/fidelity.md)";
const char* const kP4dFabric =
    "p4d on EFA, NCCL 2.9.9: the run's fabric delivered ~60-70% of the 4 x 100G line rate at 2, 3 "
    "and 4 nodes alike (tree at 2 nodes, ring from 3); the preset keeps the line rate, `twinccl "
    "calibrate` (or --set nic_gbps) fits it: see the test below";

const char* const kGb200Rack =
    "one GB200 NVL72 rack, NVLS on 72 GPUs: the run's algbw plateau (423 GB/s from 4 GiB) is "
    "0.59 of the NVLink's 721.8 GB/s where the model's NVLS gives 0.74 x 32/33 (505 GB/s), and "
    "below 4 GiB ~550 us above S / 423 GB/s; no mechanism found (docs/fidelity.md)";

const CloudFigure kFigures[] = {
    // dstack PR 3961 (2026-06-12), "NCCL tests on 2x p6-b200", 8 B out of place.
    {"dstack#3961", "aws-p6-b200-2", 8, 50.58, 0.25, ""},
    // NVIDIA/nccl issue 527 (2022-07-25), p4d.24xlarge, NCCL 2.9.9, 1 GiB.
    {"nccl#527 1 node", "aws-p4d-1", 1024 * kMiB, 8142.6, 0.10, ""},
    {"nccl#527 2 nodes", "aws-p4d-2", 1024 * kMiB, 35215.0, 0.32, kP4dFabric},
    {"nccl#527 3 nodes", "aws-p4d-3", 1024 * kMiB, 64782.0, 0.36, kP4dFabric},
    {"nccl#527 4 nodes", "aws-p4d-4", 1024 * kMiB, 70253.0, 0.40, kP4dFabric},
    // gcp-a3mega-h100-2node-all_reduce.log (tests/fidelity/logs), 2 x a3-megagpu-8g.
    {"a3mega 32 KiB", "gcp-a3mega-2", 32 * 1024, 155.2, 0.80, kTcpxo},
    {"a3mega 1 GiB", "gcp-a3mega-2", 1024 * kMiB, 6759.0, 0.15, kTcpxo},
    {"a3mega 8 GiB", "gcp-a3mega-2", 8192 * kMiB, 47535.0, 0.10, ""},
    // Added in the held-out round of issue 24 (docs/fidelity.md "Held out, second round"); each
    // predicted before any change was made for it, the error then is the error now.
    // aws/aws-k8s-tester PR 585 (2025-02-19): 2 x p5.48xlarge on EFA (the MPIJob's slotsPerWorker
    // is the node's 8 GPUs), 16 B and 128 B out of place (8 B: 136.3 us, a first-call outlier).
    {"aws-k8s-tester#585 16 B", "aws-p5-2", 16, 69.29, 0.25, ""},
    {"aws-k8s-tester#585 128 B", "aws-p5-2", 128, 68.37, 0.25, ""},
    // ROCm/rccl PR 2078: 2 x 8 MI300X (host smc300x-...) on AMD AINIC (Pollara 400G) RoCE, RCCL,
    // mpirun -np 16, -g 1.
    {"rccl#2078 2 GiB", "mi300x-roce-2", 2048 * kMiB, 11186.0, 0.10, ""},
    {"rccl#2078 4 GiB", "mi300x-roce-2", 4096 * kMiB, 22410.0, 0.10, ""},
    {"rccl#2078 8 GiB", "mi300x-roce-2", 8192 * kMiB, 44734.0, 0.10, ""},
    {"rccl#2078 16 GiB", "mi300x-roce-2", 16384 * kMiB, 89235.0, 0.10, ""},
    // coreweave/nccl-tests PR 43 (2025-02-20): one full GB200 NVL72 rack, 72 ranks.
    {"coreweave#43 512 MiB", "gb200-nvl72", 512 * kMiB, 1806.7, 0.35, kGb200Rack},
    {"coreweave#43 1 GiB", "gb200-nvl72", 1024 * kMiB, 3108.8, 0.30, kGb200Rack},
    {"coreweave#43 2 GiB", "gb200-nvl72", 2048 * kMiB, 5589.1, 0.25, kGb200Rack},
    {"coreweave#43 4 GiB", "gb200-nvl72", 4096 * kMiB, 10094.0, 0.20, kGb200Rack},
    {"coreweave#43 8 GiB", "gb200-nvl72", 8192 * kMiB, 20299.0, 0.20, kGb200Rack},
};
}  // namespace

TEST_CASE("held-out cloud figures are within their band (analytic)") {
  for (const CloudFigure& f : kFigures) {
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.count = f.bytes / 4;
    r.gpus_per_thread = 1;
    const Prediction p = predict(topo::load_topology(f.topology), r);
    const double error = p.time_us / f.measured_time_us - 1.0;
    INFO(f.source << " on " << f.topology << ", " << f.bytes << " B: " << p.algorithm << "/"
                  << name(p.protocol) << " predicts " << p.time_us << " us, measured "
                  << f.measured_time_us << " us, error " << error * 100 << "%"
                  << (*f.residual ? std::string(" (residual: ") + f.residual + ")" : ""));
    CHECK(std::abs(error) <= f.band);
    if (!*f.residual) CHECK(f.band == (f.bytes >= 64 * kMiB ? 0.10 : 0.25));
  }
}

// The EFA class is what brings the p6-b200 latency row in: the same graph on InfiniBand
// (b200-cluster-2, NCCL's 2.7-14 us network hops) is half the measured time.
TEST_CASE("EFA's per-message cost is what the p6-b200 latency row needs") {
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = 2;
  r.gpus_per_thread = 1;
  const double ib = predict(topo::load_topology("b200-cluster-2"), r).time_us;
  CHECK(ib / 50.58 - 1.0 < -0.25);  // outside the band without EFA's hop
}

// NVIDIA/nccl issue 527's three p4d rows (1 GiB, NCCL 2.9.9, 2 / 3 / 4 nodes: 35215 / 64782 /
// 70253 us) are one fabric only if the 2-node run is a tree: NCCL prices a 2-node tree at its
// graph's raised intra speed (search.cc pass 2, up to 2 x the NIC's), and a 2-node tree moves S
// per node each way where a ring moves 2(n-1)/n S. So one NIC rate, fitted on the 2-node row
// alone, predicts the 3- and 4-node rows (held out). With the ring at 2 nodes (the model before
// this change) the fit lands at the line rate (+19.7% at 2 nodes) and 3 / 4 nodes are -33% / -38%.
TEST_CASE("p4d: a NIC rate fitted on 2 nodes predicts 3 and 4 nodes (the 2-node tree)") {
  const auto predict_us = [](int nodes, double nic_gbps, std::string* algo = nullptr) {
    topo::TopologyEdits e;
    e.settings.push_back(topo::parse_setting("nic_gbps=" + std::to_string(nic_gbps)));
    const topo::EditedTopology t =
        topo::apply_edits(topo::load_topology("aws-p4d-" + std::to_string(nodes)), e);
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.count = 1024 * kMiB / 4;
    r.gpus_per_thread = 1;
    const Prediction p = predict(t.topology, r);
    if (algo) *algo = p.algorithm;
    return p.time_us;
  };
  // Fit: the NIC rate (GB/s, at most the 12.5 line rate) whose 2-node prediction is nearest.
  double best_nic = 12.5, best_error = 1e9;
  for (double nic = 5.0; nic <= 12.5 + 1e-9; nic += 0.25) {
    const double error = std::abs(predict_us(2, nic) / 35215.0 - 1.0);
    if (error < best_error) best_error = error, best_nic = nic;
  }
  std::string algo;
  predict_us(2, best_nic, &algo);
  const double three = predict_us(3, best_nic) / 64782.0 - 1.0;
  const double four = predict_us(4, best_nic) / 70253.0 - 1.0;
  INFO("fitted nic_gbps " << best_nic << " (2 nodes " << algo << ", error " << best_error * 100
                          << "%): 3 nodes " << three * 100 << "%, 4 nodes " << four * 100 << "%");
  CHECK(algo == "tree");
  CHECK(best_error <= 0.10);
  CHECK(std::abs(three) <= 0.20);
  CHECK(std::abs(four) <= 0.20);
}

// A one-rank call in place is nothing on the device (NCCL's one-rank path: a copy out of place,
// nothing in place; NCCL 1's RingAllReduce had the same rule, 2.x's ncclLaunchOneRank keeps it),
// so nccl-tests times the host's call alone. Held out: NVIDIA/nccl issue 120 (2017, one GPU:
// every busbw 0.00), 10 MB in place 0.004-0.007 ms (median 0.005) for char/int/half sum, prod,
// max, min, against 0.061-0.073 ms out of place. The GPU is not named, and the in-place time does
// not depend on it: the same on every preset. Before (the copy's time in place too): 15.9 us on
// dgx-a100, +218%; now 5.0 us, 0%.
TEST_CASE("one rank in place: the host's call alone (NVIDIA/nccl issue 120)") {
  for (const char* preset : {"dgx-a100", "dgx-h200"}) {
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.nranks = 1;
    r.spec.count = 10000000;
    r.dtype = DataType::int8;
    r.gpus_per_thread = 1;
    r.in_place = true;
    const Prediction p = predict(topo::load_topology(preset), r);
    INFO(preset << ": " << label(p) << " " << p.time_us << " us, measured 5 us (4-7)");
    CHECK(label(p) == "one_rank/none");
    CHECK(std::abs(p.time_us / 5.0 - 1.0) <= 0.25);
  }
}

// `-g 8` in the middle sizes (docs/fidelity.md "`-g 8` middle sizes ... third look"): Azure's
// AI-benchmarking-guide sweeps (in-place busbw of `-g 8 -n 40`, docs/fidelity-sources.md), held
// out; time = S / (busbw x 8/14). Bands hold today's error, so a drift fails; the A100 ring rows
// and H200's host floor carry the reasons the note gives.
TEST_CASE("held-out -g 8 middle sizes: Azure ND A100 v4 / H100 v5 / H200 v5") {
  const char* const host_floor =
      "H200 v5's host launches 8 GPUs in <= 31 us (3.9 us each), the model's default 8 x 5";
  const char* const a100_host =
      "A100 ring, host-bound: the -g 8 floor grows with NCCL's channel count (not modelled)";
  const char* const a100_kernel =
      "A100 ring, kernel-bound: a -g 8 excess growing with size, GPU side, no mechanism found";
  struct Row {
    const char* topology;
    int nccl_version;
    const char* algorithm;
    std::size_t bytes;
    double busbw_gbps;
    double band;
    const char* residual;
  };
  const Row rows[] = {
      {"dgx-a100", 21805, "", 64 * 1024, 2.70, 0.25, ""},
      {"dgx-a100", 21805, "", 256 * 1024, 10.11, 0.25, ""},
      {"dgx-a100", 21805, "", 1 * kMiB, 36.22, 0.25, a100_host},
      {"dgx-a100", 21805, "", 4 * kMiB, 71.43, 0.30, a100_kernel},
      {"dgx-a100", 21805, "", 16 * kMiB, 109.22, 0.40, a100_kernel},
      {"dgx-h100", 21805, "nvls", 64 * 1024, 2.72, 0.10, ""},
      {"dgx-h100", 21805, "nvls", 512 * 1024, 21.35, 0.10, ""},
      {"dgx-h100", 21805, "nvls", 4 * kMiB, 128.73, 0.10, ""},
      {"dgx-h100", 21805, "nvls", 16 * kMiB, 234.45, 0.10, ""},
      {"dgx-h200", 22005, "nvls", 256 * 1024, 14.75, 0.35, host_floor},
      {"dgx-h200", 22005, "nvls", 4 * kMiB, 138.44, 0.10, ""},
      {"dgx-h200", 22005, "nvls", 16 * kMiB, 240.41, 0.10, ""},
  };
  for (const Row& row : rows) {
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.count = row.bytes / 4;
    r.gpus_per_thread = 8;
    r.nccl_version = row.nccl_version;
    r.algorithm = row.algorithm;
    const Prediction p = predict(topo::load_topology(row.topology), r);
    const double measured_us = static_cast<double>(row.bytes) / (row.busbw_gbps * 8.0 / 14.0) / 1e3;
    const double error = p.time_us / measured_us - 1.0;
    INFO(row.topology << " " << row.bytes << " B: " << p.algorithm << "/" << name(p.protocol)
                      << " predicts " << p.time_us << " us, measured " << measured_us
                      << " us, error " << error * 100 << "% " << row.residual);
    CHECK(std::abs(error) <= row.band);
  }
}
