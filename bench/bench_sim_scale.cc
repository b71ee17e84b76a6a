// bench_sim_scale: how far the simulator scales (a plain program printing a table; not a test).
//
//   ./build/bench/bench_sim_scale            # all rows
//   ./build/bench/bench_sim_scale --quick    # skip the 16384-rank flow row
//
// Rows: flow-level ring all_reduce of 1 GiB on 1024 ranks (h100-cluster-128; target <= 2 s wall),
// on 16384 ranks (a 2048-node cluster built here: the presets stop at 8192 GPUs; target peak RSS
// < 4 GiB), and the analytic model on 1,048,576 ranks (a 131072-node cluster; target < 1 s).
// Peak RSS is VmHWM of this process and of the SimGrid child process (the flow simulation runs in a
// child, sim/src/child_process.cc), read from /proc/self/status and from wait4's rusage.
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
  double rss_mib;
};

template <class F>
double seconds_of(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Row run(const char* what, const topo::Topology& t, sim::Fidelity fidelity) {
  sim::Request r;
  r.spec.kind = OpKind::all_reduce;
  r.spec.count = (std::size_t{1} << 30) / 4;  // 1 GiB of float32
  r.algorithm = "ring";
  r.protocol = sim::Protocol::simple;
  r.fidelity = fidelity;
  sim::Prediction p;
  const double s = seconds_of([&] { p = sim::predict(t, r); });
  return {what,
          p.nranks,
          fidelity,
          s,
          p.time_us,
          p.busbw_gbps,
          std::max(vm_hwm_mib(), children_max_rss_mib())};
}

void print(const Row& row) {
  std::printf("%-44s %9d %-9s %10.3f %14.1f %10.2f %10.0f\n", row.what, row.nranks,
              std::string(sim::name(row.fidelity)).c_str(), row.seconds, row.time_us,
              row.busbw_gbps, row.rss_mib);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  std::printf("ring all_reduce, 1 GiB float32, Simple protocol\n");
  std::printf("%-44s %9s %-9s %10s %14s %10s %10s\n", "topology", "ranks", "fidelity", "wall_s",
              "predicted_us", "busbw", "peakRSS_MiB");
  std::optional<topo::Topology> c128;
  double build = seconds_of([&] { c128 = topo::h100_cluster(128); });
  std::printf("  (built h100-cluster-128 in %.3f s)\n", build);
  print(run("h100-cluster-128 (1024 GPUs)", *c128, sim::Fidelity::flow));
  print(run("h100-cluster-128 (1024 GPUs)", *c128, sim::Fidelity::analytic));
  if (!quick) {
    std::optional<topo::Topology> c2048;
    build = seconds_of([&] { c2048 = flat_cluster(2048, 64); });
    std::printf("  (built flat-cluster-2048 in %.3f s)\n", build);
    print(run("flat-cluster-2048 (16384 GPUs)", *c2048, sim::Fidelity::flow));
  }
  std::optional<topo::Topology> huge;
  build = seconds_of([&] { huge = flat_cluster(131072, 64); });
  std::printf("  (built flat-cluster-131072 in %.3f s)\n", build);
  print(run("flat-cluster-131072 (1048576 GPUs)", *huge, sim::Fidelity::analytic));
  return 0;
}
