// Rooted collectives in flow: the root's data leaves (or arrives) at the root's GPU on every
// channel. Channels rotate the ranks over a node's GPUs only for NCCL's per-channel rings and trees
// (sim/src/rails.cc); a direct gather/scatter/broadcast/reduce rotated played channel c's root on
// another GPU, so its bytes left through every NIC of the root's node: h100-cluster-2 gather of
// 64 MiB in 109.78 us, 6.6x under the 699 us that the root's one NIC needs for the 32 MiB coming
// from the other node (analytic: 723.45 us).
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kMiB = std::size_t{1} << 20;

// `bytes` as nccl-tests sizes them: the whole buffer (gather: the root's output, count per rank).
Prediction run(const topo::Topology& t, OpKind kind, std::size_t bytes,
               const std::string& algorithm, Fidelity fidelity) {
  Request r;
  r.spec.kind = kind;
  r.spec.count = bytes / 4;
  if (kind == OpKind::gather || kind == OpKind::scatter) {
    r.spec.count /= static_cast<std::size_t>(t.gpu_count());
  }
  r.spec.root = 0;
  r.algorithm = algorithm;
  r.fidelity = fidelity;
  r.compression = RoundCompression::on;
  return predict(t, r);
}
}  // namespace

TEST_CASE("flow rooted collectives across nodes agree with analytic, the root's NIC bound") {
  const std::string preset = GENERATE(as<std::string>{}, "h100-cluster-2", "h100-cluster-4",
                                      "mi300x-cluster-2", "gb200-nvl72-cluster-2");
  const topo::Topology t = topo::load_topology(preset);
  const OpKind kind = GENERATE(OpKind::gather, OpKind::scatter, OpKind::broadcast, OpKind::reduce);
  const std::string algorithm = GENERATE(as<std::string>{}, "direct", "");  // "": the default
  const Prediction a = run(t, kind, 64 * kMiB, algorithm, Fidelity::analytic);
  const Prediction f = run(t, kind, 64 * kMiB, a.algorithm, Fidelity::flow);
  INFO(preset << " " << name(kind) << " " << a.algorithm << "/" << name(a.protocol) << ": analytic "
              << a.time_us << " us, flow " << f.time_us);
  CHECK(std::abs(f.time_us - a.time_us) / a.time_us < 0.05);
  if (a.algorithm == "direct") {
    // Every byte from (to) the other nodes passes the root's one NIC, at most 400 Gb/s = 50 GB/s.
    const double ranks = static_cast<double>(t.gpu_count());
    const double ranks_per_node = static_cast<double>(t.summary().gpus_per_node);
    const double remote_bytes = kind == OpKind::gather || kind == OpKind::scatter
                                    ? 64.0 * kMiB * (ranks - ranks_per_node) / ranks
                                    : 64.0 * kMiB * (ranks - ranks_per_node);
    CHECK(f.time_us >= remote_bytes / 50e9 * 1e6);
  }
}
