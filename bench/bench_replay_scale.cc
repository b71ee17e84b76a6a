// Replay at scale: a 1024-rank trace of 100 collectives (data-parallel all_reduces on the world
// and tensor-parallel all_gather/reduce_scatter on the 128 node groups, with compute between and
// the all_reduces overlapping it) replayed on h100-cluster-128. Goal: under 60 s on the 2-core
// build machine. Prints wall time, simulated time and the busiest link; exit 1 over the goal.
//
//   ./bench_replay_scale [ranks=1024] [collectives=100]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "twinccl/sim/replay.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;

namespace {

sim::Trace make_trace(int ranks, int collectives) {
  sim::Trace t;
  t.program = fmt::format("bench: {} ranks, {} collectives", ranks, collectives);
  t.ranks.resize(static_cast<std::size_t>(ranks));
  std::vector<int> all(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) all[static_cast<std::size_t>(r)] = r;
  t.communicators.push_back({"world", all});
  const int tp = 8;
  for (int g = 0; g < ranks / tp; ++g) {
    std::vector<int> members;
    for (int i = 0; i < tp; ++i) members.push_back(g * tp + i);
    t.communicators.push_back({"tp" + std::to_string(g), members});
  }
  for (int r = 0; r < ranks; ++r) {
    sim::RankTrace& rt = t.ranks[static_cast<std::size_t>(r)];
    const int tp_comm = 1 + r / tp;
    std::uint64_t world_seq = 0, tp_seq = 0;
    int pending_all_reduce = -1;
    for (int k = 0; k < collectives; ++k) {
      sim::TraceOp op;
      op.dtype = DataType::bfloat16;
      const int kind = k % 4;
      if (kind == 3) {  // data parallel: async, waited two collectives later
        op.comm = 0;
        op.seq = world_seq++;
        op.kind = OpKind::all_reduce;
        op.count = std::size_t{64} << 20;
        op.async = true;
      } else {
        op.comm = tp_comm;
        op.seq = tp_seq++;
        op.kind = kind == 1 ? OpKind::reduce_scatter : OpKind::all_gather;
        op.count = std::size_t{4} << 20;
      }
      rt.ops.push_back(op);
      const int id = static_cast<int>(rt.ops.size()) - 1;
      rt.events.push_back({sim::TraceEventKind::op, id, 0.0, 0.0});
      if (op.async) {
        if (pending_all_reduce >= 0)
          rt.events.push_back({sim::TraceEventKind::wait, pending_all_reduce, 0.0, 0.0});
        pending_all_reduce = id;
      } else {
        rt.events.push_back({sim::TraceEventKind::wait, id, 0.0, 0.0});
      }
      rt.events.push_back({sim::TraceEventKind::compute, -1, 0.0, 2e11});
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const int ranks = argc > 1 ? std::atoi(argv[1]) : 1024;
  const int collectives = argc > 2 ? std::atoi(argv[2]) : 100;
  const topo::Topology topology = topo::h100_cluster((ranks + 7) / 8);
  const auto t0 = std::chrono::steady_clock::now();
  const sim::Trace trace = make_trace(ranks, collectives);
  const auto t1 = std::chrono::steady_clock::now();
  const sim::ReplayResult r = sim::replay(trace, topology);
  const auto t2 = std::chrono::steady_clock::now();
  const double build_s = std::chrono::duration<double>(t1 - t0).count();
  const double replay_s = std::chrono::duration<double>(t2 - t1).count();
  fmt::print(
      "replay {} ranks x {} collectives on {}: wall {:.2f} s (trace built in {:.2f} s), simulated "
      "{:.1f} us, "
      "{} operations, overlap {:.1f}%\n",
      ranks, collectives, topology.name(), replay_s, build_s, r.total_us, r.ops.size(),
      100.0 * r.overlap_fraction());
  if (!r.links.empty())
    fmt::print("busiest link: {} ({:.0f}%)\n", r.links.front().name,
               100.0 * r.links.front().utilisation);
  const bool ok = replay_s < 60.0;
  fmt::print("goal: under 60 s: {}\n", ok ? "met" : "MISSED");
  return ok ? 0 : 1;
}
