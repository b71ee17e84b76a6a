// Published nccl-tests figures (docs/fidelity.md) against the analytic and flow models: each within
// the issue's band (10% at >= 64 MiB, 25% below 1 MiB), or, where docs/fidelity.md records a
// residual with its reason, within that documented band, so the test fails if the model drifts
// further. Logs are read through the nccl-tests parser, as `twinccl compare` reads them, and
// predicted as nccl-tests times them: with the host launch of the log's nGpus (-g) GPUs per thread.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "twinccl/perf_math.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kMiB = std::size_t{1} << 20;

struct Figure {
  const char* log;        // file in tests/fidelity/logs, or "" for a figure quoted in the docs
  const char* topology;   // preset
  const char* algorithm;  // "" = NCCL's choice
  std::size_t bytes;
  double measured_time_us;  // out-of-place time (or from the quoted busbw)
  double band;              // |predicted / measured - 1| allowed
  const char* residual;     // why the band is wider than the issue's, "" = the issue's band
  int channels = 0;         // NCCL_MIN_NCHANNELS / NCCL_MIN_CTAS of the run, 0 = model's choice
  int gpus_per_thread = 1;  // quoted figures: nccl-tests -g of the run (logs: their nGpus line)
  bool ll128 = false;       // NCCL_PROTO=LL128 forced in the run
  bool in_place = false;    // the in-place time (the out-of-place one is an outlier, see where)
};

struct Measured {
  double time_us = 0.0;
  int gpus_per_thread = 1;  // the log's nGpus (-g), 1 when the log has no "# nThread" line
  int nccl_version = 0;     // the log's "NCCL version" as NCCL's code, 0 = not printed
};

double issue_band(std::size_t bytes) { return bytes >= 64 * kMiB ? 0.10 : 0.25; }

// From busbw (GB/s) of an all_reduce on n ranks: time = bytes / (busbw / (2(n-1)/n)).
double time_from_busbw(std::size_t bytes, double busbw_gbps, int n) {
  return static_cast<double>(bytes) / (busbw_gbps / (2.0 * (n - 1) / n) * 1e3);
}

Measured measured_from_log(const Figure& f) {
  const std::string path = std::string(TWINCCL_FIDELITY_LOGS) + "/" + f.log;
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  for (const NcclTestsTable& t : parse_nccl_tests_file_text(text.str(), f.log)) {
    for (const NcclTestsRow& r : t.rows) {
      if (r.size_bytes == f.bytes) {
        const std::optional<NcclTestsBlock>& b = f.in_place ? r.in_place : r.out_of_place;
        REQUIRE(b);
        return Measured{b->time_us, std::max(1, t.gpus_per_thread),
                        nccl_version_code(t.nccl_version)};
      }
    }
  }
  FAIL("no row of " << f.bytes << " B in " << f.log);
  return {};
}

const char* const kA100 = "a100-sxm4-80gb-1node-all_reduce-g8.log";
const char* const kA100Mpi = "a100-sxm4-80gb-1node-all_reduce-mpi8.log";
const char* const kA100Dgx = "a100-sxm4-40gb-dgx-1node-all_reduce-g8-1M-1G.log";
const char* const kA100Vm = "a100-sxm4-80gb-vm-1node-all_reduce-mpi8-32M-1G.log";
const char* const kNvls = "issue290-h100-1node-all_reduce-nvls.log";
const char* const kXe = "issue309-h100-xe9680-2node-all_reduce-8B-16G.log";
const char* const kRing2 = "issue309-h100-ib400-2node-all_reduce-ring-minctas24.log";
const char* const kVm4 = "issue309-h100-vm-4node-all_reduce-8B-16G.log";
const char* const kNebius = "nebius-h200-2node-all_reduce-1G-16G.log";
const char* const kRing64 =
    "8 A100 ring at 64 MiB below NCCL's bandwidth: no mechanism found in NCCL or nccl-tests "
    "(docs/fidelity.md, residuals)";

const Figure kFigures[] = {
    {kA100, "dgx-a100", "", 32 * 1024, 0, 0.25, ""},
    {kA100, "dgx-a100", "", 64 * kMiB, 0, 0.25, kRing64},
    {kA100, "dgx-a100", "", 1024 * kMiB, 0, 0.10, ""},
    {kA100Mpi, "dgx-a100", "", 32 * 1024, 0, 0.25, ""},
    {kA100Mpi, "dgx-a100", "", 64 * kMiB, 0, 0.15, kRing64},
    {kA100Mpi, "dgx-a100", "", 1024 * kMiB, 0, 0.10, ""},
    // A third machine (DGX A100 40GB, `-g 8`): the same 64 MiB shortfall (-16%), 1 GiB in band.
    {kA100Dgx, "dgx-a100", "", 64 * kMiB, 0, 0.25, kRing64},
    {kA100Dgx, "dgx-a100", "", 1024 * kMiB, 0, 0.10, ""},
    // A second one-process-per-GPU run (VM, NCCL 2.16.2): 64 MiB within the issue's band (-1.3%).
    {kA100Vm, "dgx-a100", "", 64 * kMiB, 0, 0.10, ""},
    {kA100Vm, "dgx-a100", "", 1024 * kMiB, 0, 0.10, ""},
    {kNvls, "dgx-h100", "", 128 * kMiB, 0, 0.10, ""},  // was 20%: NVLS pipeline fill
    {kNvls, "dgx-h100", "", 1024 * kMiB, 0, 0.10, ""},
    {kXe, "h100-cluster-2", "", 32 * 1024, 0, 0.25, ""},
    {kXe, "h100-cluster-2", "", 64 * kMiB, 0, 0.10, ""},  // was 30%: NVLS-tree pipeline fill
    {kXe, "h100-cluster-2", "", 1024 * kMiB, 0, 0.10, ""},
    {kXe, "h100-cluster-2", "", 8192 * kMiB, 0, 0.10, ""},
    // NCCL_ALGO=Ring NCCL_MIN_CTAS=24: the run's 24 channels.
    {kRing2, "h100-cluster-2", "ring", 64 * kMiB, 0, 0.10, "", 24},
    {kRing2, "h100-cluster-2", "ring", 1024 * kMiB, 0, 0.10, "", 24},
    {kRing2, "h100-cluster-2", "ring", 8192 * kMiB, 0, 0.10, "", 24},
    {kVm4, "h100-cluster-4", "", 32 * 1024, 0, 0.25, ""},
    {kVm4, "h100-cluster-4", "", 64 * kMiB, 0, 0.10, ""},  // was 25%: NVLS-tree pipeline fill
    {kVm4, "h100-cluster-4", "", 1024 * kMiB, 0, 0.10, ""},
    {kVm4, "h100-cluster-4", "", 8192 * kMiB, 0, 0.10, ""},
    {kNebius, "h100-cluster-2", "", 1024 * kMiB, 0, 0.10, ""},
    {kNebius, "h100-cluster-2", "", 8192 * kMiB, 0, 0.10, ""},
    // Quoted figures (docs/fidelity-sources.md): Azure ND A100 v4 / ND H100 v5 in-place busbw,
    // `-g 8` (one thread launches the 8 GPUs). The H100 run forces NCCL_ALGO=NVLS.
    {"", "dgx-a100", "", 32 * 1024, time_from_busbw(32 * 1024, 1.37, 8), 0.25, "", 0, 8},
    {"", "dgx-h100", "nvls", 32 * 1024, time_from_busbw(32 * 1024, 1.71, 8), 0.25, "", 0, 8},
    {"", "dgx-h100", "nvls", 64 * kMiB, time_from_busbw(64 * kMiB, 361.78, 8), 0.10, "", 0, 8},
    {"", "dgx-h100", "nvls", 1024 * kMiB, time_from_busbw(1024 * kMiB, 466.35, 8), 0.10, "", 0, 8},
    {"", "dgx-h100", "nvls", 8192 * kMiB, time_from_busbw(8192 * kMiB, 478.87, 8), 0.10, "", 0, 8},
    // The same 64 MiB dip as the `-g 8` log, on another machine and NCCL 2.18.5: 166.63 GB/s.
    {"", "dgx-a100", "", 64 * kMiB, time_from_busbw(64 * kMiB, 166.63, 8), 0.25, kRing64, 0, 8},
    {"", "dgx-a100", "", 1024 * kMiB, time_from_busbw(1024 * kMiB, 228.10, 8), 0.10, "", 0, 8},
    {"", "dgx-a100", "", 8192 * kMiB, time_from_busbw(8192 * kMiB, 231.58, 8), 0.10, "", 0, 8},
    // gj-aion's 8 nodes rerun with NVIDIA's advice (nccl-tests issue 309, out-of-place time):
    // NCCL_MIN_CTAS=24 NCCL_IB_QPS_PER_CONNECTION=2, NCCL's choice of algorithm, 24 channels. It
    // replaces the same nodes' default runs (docs/fidelity.md, "Not calibrated on").
    {"", "h100-cluster-8", "", 1024 * kMiB, 5640.1, 0.10, "", 24},
    {"", "h100-cluster-8", "", 8192 * kMiB, 43211.0, 0.10, "", 24},
};
}  // namespace

TEST_CASE("published nccl-tests all_reduce figures are within their band (analytic)") {
  for (const Figure& f : kFigures) {
    const Measured m =
        *f.log ? measured_from_log(f) : Measured{f.measured_time_us, f.gpus_per_thread};
    const double measured = m.time_us;
    const topo::Topology t = topo::load_topology(f.topology);
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.count = f.bytes / 4;
    r.algorithm = f.algorithm;
    r.params.channels = f.channels;
    r.gpus_per_thread = m.gpus_per_thread;  // the host launch nccl-tests measures (host_launch.h)
    r.nccl_version = m.nccl_version;  // NCCL ranks as the log's version did (2.26.2: NVLS-tree)
    if (f.ll128) r.protocol = Protocol::ll128;
    const Prediction p = predict(t, r);
    const double error = p.time_us / measured - 1.0;
    INFO((*f.log ? f.log : "quoted figure")
         << " on " << f.topology << ", " << f.bytes << " B: " << p.algorithm << "/"
         << name(p.protocol) << " predicts " << p.time_us << " us, measured " << measured
         << " us, error " << error * 100 << "% (band " << f.band * 100 << "%"
         << (*f.residual ? std::string(", residual: ") + f.residual : std::string()) << ")");
    CHECK(std::abs(error) <= f.band);
    // A residual band is never narrower than the issue's; the issue's band is never widened
    // without a documented reason.
    CHECK(f.band >= issue_band(f.bytes));
    if (!*f.residual) CHECK(f.band == issue_band(f.bytes));
  }
}

// The middle regime (1-64 MiB) where NCCL runs NVLS-tree: the issue sets no band there. NCCL
// 2.26.2 (both logs' version) ranks NVLS-tree first from 1 MiB on 2 nodes and from 2 MiB on 4
// (tests/sim/test_nccl_version_rank.cc); the newest model only from 4 / 16 MiB, where these rows
// were tree/LL128 at -23% / -31% (4 nodes, 4 / 8 MiB). 15% holds from 4 MiB (the K/(K+1) exposed
// fill; with the whole 2-step fill 4 and 8 MiB on 2 nodes were +30% / +31%). 20% for the 2-node
// 1-2 MiB rows (+12% / +17%: NVLS-tree's fill at one 32 KiB chunk per head and channel, K = 1,
// and NCCL's 20.9 us network hop, both as at 4 MiB), the largest shown by a row that NCCL's
// code says runs NVLS-tree. The 4-node 2 MiB row is the in-place time: out of place it took
// 191.3 us, in place 132.2, and the rows around it agree in both (151.1 / 154.0 us at 4 MiB); out
// of place the model is -29%.
TEST_CASE("NVLS-tree middle-regime rows are within their band (analytic)") {
  Figure vm2 = {kVm4, "h100-cluster-4", "", 2 * kMiB, 0, 0.15, ""};
  vm2.in_place = true;
  const Figure rows[] = {
      {kXe, "h100-cluster-2", "", 1 * kMiB, 0, 0.20, ""},
      {kXe, "h100-cluster-2", "", 2 * kMiB, 0, 0.20, ""},
      {kXe, "h100-cluster-2", "", 4 * kMiB, 0, 0.15, ""},
      {kXe, "h100-cluster-2", "", 8 * kMiB, 0, 0.15, ""},
      {kXe, "h100-cluster-2", "", 16 * kMiB, 0, 0.15, ""},
      {kXe, "h100-cluster-2", "", 32 * kMiB, 0, 0.15, ""},
      vm2,
      {kVm4, "h100-cluster-4", "", 4 * kMiB, 0, 0.15, ""},
      {kVm4, "h100-cluster-4", "", 8 * kMiB, 0, 0.15, ""},
      {kVm4, "h100-cluster-4", "", 16 * kMiB, 0, 0.15, ""},
      {kVm4, "h100-cluster-4", "", 32 * kMiB, 0, 0.15, ""},
  };
  for (const Figure& f : rows) {
    const Measured m = measured_from_log(f);
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.count = f.bytes / 4;
    r.gpus_per_thread = m.gpus_per_thread;
    r.nccl_version = m.nccl_version;  // NCCL ranks as the log's version did (2.26.2: NVLS-tree)
    CHECK(m.nccl_version == 22602);
    const Prediction p = predict(topo::load_topology(f.topology), r);
    const double error = p.time_us / m.time_us - 1.0;
    INFO(f.log << ", " << f.bytes << " B: " << p.algorithm << " predicts " << p.time_us
               << " us, measured " << m.time_us << " us, error " << error * 100 << "%");
    CHECK(p.algorithm == "nvls_tree");
    CHECK(std::abs(error) <= f.band);
  }
}

TEST_CASE("fidelity: the NCCL-faithful fixes are what moves the figures") {
  // dgx-a100 at NCCL's 20 GB/s per link: 12 channels x 20 = 240 GB/s busBw, ring Simple.
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = 1024 * kMiB / 4;
  r.algorithm = "ring";
  r.protocol = Protocol::simple;
  const Prediction a100 = predict(topo::dgx_a100(), r);
  CHECK(a100.channels == 12);
  // The bytes term is NCCL's 240 GB/s: the time less NCCL's latency (8.4 + 14 x 3.4 us) and the
  // second slice sync of each step in each of the 6 loops (1 GiB / 12 channels of 8 x 2 MiB
  // chunks: 6 x 14 x 3.4 us, ring_slice_sync.cc). The whole call: 230 GB/s busBw, as 8 A100s
  // measure at 1 GiB (nccl#527, 230.8 GB/s).
  const double fixed_us = 8.4 + 14 * 3.4 + 6 * 14 * 3.4;
  const double bytes_busbw_gbps =
      static_cast<double>(1024 * kMiB) / (1000.0 * (a100.time_us - fixed_us)) * 14.0 / 8.0;
  CHECK(bytes_busbw_gbps == Approx(240.0).epsilon(1e-9));
  CHECK(a100.busbw_gbps == Approx(230.8).epsilon(0.01));
  // Two nodes: one channel per NIC at NCCL's 48 GB/s inter speed: busBw 8 x 48.
  const Prediction ring2 = predict(topo::h100_cluster(2), r);
  CHECK(ring2.channels == 8);
  CHECK(ring2.busbw_gbps == Approx(384.0).epsilon(0.05));  // less its latency
  // NVLS-tree across 2 nodes: NCCL's per-channel cap 57.7 x 8 channels = 461.6 GB/s busBw (at
  // 8 GiB, where its latency and pipeline fill weigh under 1%).
  r.algorithm = "nvls_tree";
  r.spec.count = 8192 * kMiB / 4;
  const Prediction nvls_tree = predict(topo::h100_cluster(2), r);
  CHECK(nvls_tree.busbw_gbps == Approx(461.6).epsilon(0.01));
}

TEST_CASE(
    "fidelity: NVLS pipeline fill, from NCCL's channels, heads and chunk, outside the choice") {
  // The fill is 2 steps of 16 NVLS channels x 8 heads x enqueue.cc's chunk at the call's algbw,
  // K/(K+1) of it exposed for K steps per channel: 128 KiB from 1 GiB on one node (K = 64),
  // 64 KiB from 64 MiB (128 MiB: K = 16), 32 KiB from 8 MiB (16 MiB: K = 4), 16 KiB below (one
  // step or less: half of 2 steps of the call's bytes).
  const topo::Topology h100 = topo::dgx_h100();
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.algorithm = "nvls";
  // NCCL's NVLS price: 8 heads at 40 GB/s (9 x 40 <= 370.8) x 0.85 x 7/8 x 2, x n / (2(n-1)).
  const double algbw_gbps = 8 * 40.0 * 0.85 * 7.0 / 8.0 * 2.0 * 8.0 / 14.0;
  const auto fill_us = [&](std::size_t bytes) {
    r.spec.count = bytes / 4;
    const double kernel_us = 25.0 + static_cast<double>(bytes) / (algbw_gbps * 1e3);  // NCCL's
    return predict(h100, r).time_us - kernel_us;
  };
  const double step_bytes = 16.0 * 8.0 * 1024.0;  // channels x heads x 1 KiB
  const auto exposed = [](double k) { return k / (k + 1.0); };
  CHECK(fill_us(1024 * kMiB) ==
        Approx(2 * exposed(64) * 128 * step_bytes / (algbw_gbps * 1e3)).epsilon(1e-6));
  CHECK(fill_us(128 * kMiB) ==
        Approx(2 * exposed(16) * 64 * step_bytes / (algbw_gbps * 1e3)).epsilon(1e-6));
  CHECK(fill_us(16 * kMiB) ==
        Approx(2 * exposed(4) * 32 * step_bytes / (algbw_gbps * 1e3)).epsilon(1e-6));
  CHECK(fill_us(kMiB) == Approx(2 * exposed(1) * kMiB / (algbw_gbps * 1e3)).epsilon(1e-6));
  // NVLS-tree from 4 nodes: NCCL_NVLSTREE_MAX_CHUNKSIZE's 64 KiB at most.
  Request t = r;
  t.algorithm = "nvls_tree";
  t.spec.count = 1024 * kMiB / 4;
  const Prediction four = predict(topo::h100_cluster(4), t);
  t.software_latency = false;  // neither NCCL's latency nor the fill
  const Prediction bare = predict(topo::h100_cluster(4), t);
  const double tree_algbw = 1024.0 * kMiB / (bare.time_us * 1e3);
  const double latency_us = 0.0 + 25.0 + 2 * 2 * 20.9;  // base + NVLS hop + 2 log2(4) net hops
  CHECK(four.time_us - bare.time_us - latency_us ==
        Approx(2 * exposed(128) * 64 * step_bytes / (tree_algbw * 1e3)).epsilon(1e-3));
  // At one chunk (64 KiB on 2 nodes from 8 MiB), more steps per channel expose more of the fill:
  // the xe9680 log's 8 / 16 / 32 MiB rows are 27 / 45 / 60 us above NCCL's latency + bytes / bw.
  const auto tree_fill_us = [&](std::size_t bytes) {
    t.spec.count = bytes / 4;
    t.software_latency = true;
    const Prediction with = predict(topo::h100_cluster(2), t);
    t.software_latency = false;
    return with.time_us - predict(topo::h100_cluster(2), t).time_us - (25.0 + 2 * 20.9);
  };
  const double two_node_step_us = tree_fill_us(8 * kMiB) / exposed(1) / 2;
  CHECK(tree_fill_us(16 * kMiB) == Approx(2 * exposed(2) * two_node_step_us).epsilon(1e-3));
  CHECK(tree_fill_us(32 * kMiB) == Approx(2 * exposed(4) * two_node_step_us).epsilon(1e-3));
  // NCCL's tuner ranks without it, so NCCL's choice is what it was: ring/LL up to 1 MiB on 8 H100s
  // and NVLS from 2 MiB (nccl-tests issue 309); NVLS-tree at 64 MiB on 2 nodes.
  Request c;
  c.spec.kind = OpKind::all_reduce;
  c.spec.count = kMiB / 4;
  CHECK(predict(h100, c).algorithm == "ring");
  c.spec.count = 2 * kMiB / 4;
  CHECK(predict(h100, c).algorithm == "nvls");
  c.spec.count = 64 * kMiB / 4;
  CHECK(predict(topo::h100_cluster(2), c).algorithm == "nvls_tree");
}

// Flow prices latency as analytic does (NCCL's latency once; the topology's link latencies only
// beyond NCCL's hop, route_latency.h) and plays the bytes: the figures where it holds the issue's
// band. Before, flow's latency regime across nodes was +30% (link latencies charged twice).
TEST_CASE("published nccl-tests all_reduce figures are within the issue's band (flow)") {
  struct FlowFigure {
    const char* log;
    const char* topology;
    const char* algorithm;
    std::size_t bytes;
    int channels;
  };
  const FlowFigure figures[] = {
      {kA100, "dgx-a100", "", 32 * 1024, 0},
      {kA100Mpi, "dgx-a100", "", 32 * 1024, 0},
      {kA100, "dgx-a100", "", 1024 * kMiB, 0},
      {kA100Dgx, "dgx-a100", "", 1024 * kMiB, 0},
      {kA100Vm, "dgx-a100", "", 64 * kMiB, 0},
      {kA100Vm, "dgx-a100", "", 1024 * kMiB, 0},
      {kNvls, "dgx-h100", "", 128 * kMiB, 0},
      {kNvls, "dgx-h100", "", 1024 * kMiB, 0},
      {kXe, "h100-cluster-2", "", 32 * 1024, 0},
      {kXe, "h100-cluster-2", "", 64 * kMiB, 0},
      {kXe, "h100-cluster-2", "", 1024 * kMiB, 0},
      {kXe, "h100-cluster-2", "", 8192 * kMiB, 0},
      {kRing2, "h100-cluster-2", "ring", 1024 * kMiB, 24},
      {kRing2, "h100-cluster-2", "ring", 8192 * kMiB, 24},
      {kVm4, "h100-cluster-4", "", 32 * 1024, 0},
      {kVm4, "h100-cluster-4", "", 64 * kMiB, 0},
      {kVm4, "h100-cluster-4", "", 1024 * kMiB, 0},
      {kVm4, "h100-cluster-4", "", 8192 * kMiB, 0},
      {kNebius, "h100-cluster-2", "", 1024 * kMiB, 0},
      {kNebius, "h100-cluster-2", "", 8192 * kMiB, 0},
  };
  for (const FlowFigure& f : figures) {
    const Figure as_figure{f.log, f.topology, f.algorithm, f.bytes, 0, 0, ""};
    const Measured m = measured_from_log(as_figure);
    Request r;
    r.spec.kind = OpKind::all_reduce;
    r.spec.count = f.bytes / 4;
    r.algorithm = f.algorithm;
    r.params.channels = f.channels;
    r.gpus_per_thread = m.gpus_per_thread;
    r.nccl_version = m.nccl_version;  // NCCL ranks as the log's version did (2.26.2: NVLS-tree)
    r.fidelity = Fidelity::flow;
    const Prediction p = predict(topo::load_topology(f.topology), r);
    const double error = p.time_us / m.time_us - 1.0;
    INFO(f.log << " on " << f.topology << ", " << f.bytes << " B: flow " << p.algorithm << "/"
               << name(p.protocol) << " predicts " << p.time_us << " us, measured " << m.time_us
               << " us, error " << error * 100 << "%");
    CHECK(std::abs(error) <= issue_band(f.bytes));
  }
}

TEST_CASE("fidelity: forced channels share the NICs (gj-aion's NCCL_MIN_CTAS=24 rerun, 8 nodes)") {
  // 24 channels on 8 NICs: each channel gets 384 / 24 GB/s, so NVLS-tree stays under the NICs'
  // 8 x 48 GB/s busBw (it was 24 x 45.5 = 1092, as if each forced channel had a NIC of its own).
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = 8192 * kMiB / 4;
  r.algorithm = "nvls_tree";
  r.params.channels = 24;
  const Prediction forced = predict(topo::h100_cluster(8), r);
  CHECK(forced.channels == 24);
  CHECK(forced.busbw_gbps <= 8 * 48.0);
  r.params.channels = 0;
  const Prediction automatic = predict(topo::h100_cluster(8), r);
  CHECK(forced.busbw_gbps >= automatic.busbw_gbps);  // more channels never slow NVLS-tree down
  // A forced ring is unchanged: busBw 8 x 48 on 2 nodes (the ring-minctas24 rows).
  r.algorithm = "ring";
  r.params.channels = 24;
  CHECK(predict(topo::h100_cluster(2), r).busbw_gbps == Approx(384.0).epsilon(0.05));
}

TEST_CASE(
    "fidelity: issue 322's 128-node LL128 run is above any 8 x 400G LL128 ring (why it is "
    "not calibrated on)") {
  // docs/fidelity.md, "Not calibrated on": with NCCL's latency left out, the preset's ring/LL128
  // bandwidth on 32 channels (0.92 x 8 x 48 = 353 GB/s busBw) is still below the run's measured
  // 367.29 GB/s at 16 GiB, so no latency rule brings that run into the preset's reach. If the
  // LL128 ceiling ever rises above the measurement, reconsider the exclusion.
  Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = std::size_t{16} * 1024 * kMiB / 4;
  r.algorithm = "ring";
  r.protocol = Protocol::ll128;
  r.params.channels = 32;
  r.software_latency = false;
  const Prediction p = predict(topo::h100_cluster(128), r);
  CHECK(p.busbw_gbps == Approx(0.92 * 8 * 48).epsilon(0.01));
  CHECK(p.busbw_gbps < 367.29);
}
