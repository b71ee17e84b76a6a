// bench_sim_scale: how far the simulator scales (a plain program printing a table; not a test).
//
//   ./build/bench/bench_sim_scale            # all rows
//   ./build/bench/bench_sim_scale --quick    # skip the 8192- and 16384-rank flow rows
//   ./build/bench/bench_sim_scale --every-flow  # those rows with every flow played (the old path)
//
// Rows, ring all_reduce of 1 GiB (Simple), each next to its goal: flow on 1024 ranks
// (h100-cluster-128; <= 2 s wall), the same with every flow played (aggregate_symmetric_flows
// false: the reference the aggregated row must match), flow on 8192 ranks (h100-cluster-1024;
// <= 30 s, < 1 GiB), on 16384 ranks (a 2048-node cluster built here: the presets stop at 8192
// GPUs; <= 60 s, < 4 GiB), and the analytic model on 1,048,576 ranks (a 131072-node cluster;
// < 1 s). Peak RSS: this process's VmHWM (/proc/self/status) and the largest SimGrid child's
// (the flow simulation runs in a child, sim/src/child_process.cc; wait4's rusage), both high-water
// marks so far: rows run smallest first.
#include <sys/resource.h>
#include <sys/time.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;

namespace {

double vm_hwm_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0.0;
}

double children_max_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// `nodes` nodes of 8 GPUs on one NVSwitch each, one 400G NIC per GPU, NIC i of every node on
// leaf (node / 32, rail i), every leaf on every one of `spines` spines: h100-cluster-N's shape
// without its PCIe/CPU detail, built with TopologyBuilder.
topo::Topology flat_cluster(int nodes, int spines) {
  topo::TopologyBuilder b("flat-cluster-" + std::to_string(nodes));
  b.arch(topo::GpuArch::hopper).nvls(true);
  const topo::LinkSpec nvlink{
      .type = topo::LinkType::nvlink, .bandwidth_gbps = 370.8, .latency_us = 0.2, .lanes = 18};
  const topo::LinkSpec pcie{
      .type = topo::LinkType::pcie, .bandwidth_gbps = 48.0, .latency_us = 0.25, .lanes = 16};
  const topo::LinkSpec net{
      .type = topo::LinkType::network, .bandwidth_gbps = 50.0, .latency_us = 1.0};
  const int units = (nodes + 31) / 32;
  std::vector<topo::VertexId> leaves;
  for (int u = 0; u < units; ++u) {
    for (int rail = 0; rail < 8; ++rail) {
      leaves.push_back(
          b.add_vertex({.kind = topo::VertexKind::network_switch,
                        .name = "leaf" + std::to_string(u) + "." + std::to_string(rail),
                        .node = -1,
                        .level = 1}));
    }
  }
  for (int s = 0; s < spines; ++s) {
    const topo::VertexId spine = b.add_vertex({.kind = topo::VertexKind::network_switch,
                                               .name = "spine" + std::to_string(s),
                                               .node = -1,
                                               .level = 2});
    for (topo::VertexId leaf : leaves) b.connect(leaf, spine, net);
  }
  for (int n = 0; n < nodes; ++n) {
    const std::string p = "n" + std::to_string(n) + ".";
    const topo::VertexId sw = b.add_switch(topo::VertexKind::nvswitch, p + "nvswitch", n);
    for (int g = 0; g < 8; ++g) {
      const topo::VertexId gpu = b.add_gpu(p + "gpu" + std::to_string(g), n, n * 8 + g);
      const topo::VertexId nic = b.add_nic(p + "nic" + std::to_string(g), n, 50.0);
      b.connect(gpu, sw, nvlink);
      b.connect(gpu, nic, pcie);
      b.connect(nic, leaves[static_cast<std::size_t>((n / 32) * 8 + g)], net);
    }
  }
  return b.seal();
}

struct Row {
  const char* what;
  int nranks;
  sim::Fidelity fidelity;
  double seconds;
  double time_us;
  double busbw_gbps;
  double parent_rss_mib;
  double child_rss_mib;
};

struct Goal {
  double wall_s;
  double rss_mib;  // 0 = none
};

template <class F>
double seconds_of(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Row run(const char* what, const topo::Topology& t, sim::Fidelity fidelity, bool aggregate = true) {
  sim::Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = (std::size_t{1} << 30) / 4;  // 1 GiB of float32
  r.algorithm = "ring";
  r.protocol = sim::Protocol::simple;
  r.fidelity = fidelity;
  r.aggregate_symmetric_flows = aggregate;
  sim::Prediction p;
  const double s = seconds_of([&] { p = sim::predict(t, r); });
  return {what,      p.nranks,     fidelity,     s,
          p.time_us, p.busbw_gbps, vm_hwm_mib(), children_max_rss_mib()};
}

void print(const Row& row, Goal goal) {
  const double rss = std::max(row.parent_rss_mib, row.child_rss_mib);
  const bool met = row.seconds <= goal.wall_s && (goal.rss_mib == 0.0 || rss < goal.rss_mib);
  const std::string goal_text =
      "<= " + std::to_string(static_cast<int>(goal.wall_s)) + " s" +
      (goal.rss_mib == 0.0 ? "" : ", < " + std::to_string(static_cast<int>(goal.rss_mib)) + " MiB");
  std::printf("%-40s %8d %-8s %9.3f %13.1f %8.2f %8.0f %8.0f  %-20s %s\n", row.what, row.nranks,
              std::string(sim::name(row.fidelity)).c_str(), row.seconds, row.time_us,
              row.busbw_gbps, row.parent_rss_mib, row.child_rss_mib, goal_text.c_str(),
              met ? "met" : "MISSED");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string arg = argc > 1 ? argv[1] : "";
  const bool quick = arg == "--quick";
  const bool aggregate = arg != "--every-flow";
  std::printf("ring all_reduce, 1 GiB float32, Simple protocol\n");
  std::printf("%-40s %8s %-8s %9s %13s %8s %8s %8s  %-20s %s\n", "topology", "ranks", "fidelity",
              "wall_s", "predicted_us", "busbw", "RSS_MiB", "childMiB", "goal", "");
  std::optional<topo::Topology> c128;
  double build = seconds_of([&] { c128 = topo::h100_cluster(128); });
  std::printf("  (built h100-cluster-128 in %.3f s)\n", build);
  print(run("h100-cluster-128 (1024 GPUs)", *c128, sim::Fidelity::flow), {2.0, 0.0});
  print(run("  same, every flow played", *c128, sim::Fidelity::flow, false), {2.0, 0.0});
  print(run("h100-cluster-128 (1024 GPUs)", *c128, sim::Fidelity::analytic), {1.0, 0.0});
  if (!quick) {
    std::optional<topo::Topology> c1024;
    build = seconds_of([&] { c1024 = topo::h100_cluster(1024); });
    std::printf("  (built h100-cluster-1024 in %.3f s)\n", build);
    print(run("h100-cluster-1024 (8192 GPUs)", *c1024, sim::Fidelity::flow, aggregate),
          {30.0, 1024.0});
    c1024.reset();
    std::optional<topo::Topology> c2048;
    build = seconds_of([&] { c2048 = flat_cluster(2048, 64); });
    std::printf("  (built flat-cluster-2048 in %.3f s)\n", build);
    print(run("flat-cluster-2048 (16384 GPUs)", *c2048, sim::Fidelity::flow, aggregate),
          {60.0, 4096.0});
  }
  std::optional<topo::Topology> huge;
  build = seconds_of([&] { huge = flat_cluster(131072, 64); });
  std::printf("  (built flat-cluster-131072 in %.3f s)\n", build);
  print(run("flat-cluster-131072 (1048576 GPUs)", *huge, sim::Fidelity::analytic), {1.0, 0.0});
  return 0;
}
