// A pipelined schedule of an algorithm NCCL models as bulk flows: NCCL's tree all_reduce and its
// ring broadcast/reduce (a chain). Every edge carries its whole share at once, the pipeline's
// steady state; its fill is charged once, as the analytic model does.
//
// How it works. The schedule (core/algorithms/all_reduce_tree.cc: a chain inside each node, a
// double binary tree across node leaders, half the data per tree; broadcast_reduce_ring.cc: a
// chain from the root around the ring) is built with one chunk per step; each of its transfers
// becomes one flow and all flows start together (one step per rank). A pipeline moves every piece
// over every edge, so in steady state every edge is busy at once and each link carries the sum of
// its edges' bytes: the bulk round is that steady state, and links that several edges (or
// channels, or calls) share still slow it down. 2 nodes x 2 GPUs, tree 0 (tree 1 mirrors the
// nodes), every arrow a flow of the half's bytes, all at once:
//     up:   g1 -> g0 ==net==> g2 <- g3        down: g2 -> g3, g2 ==net==> g0 -> g1
// A broadcast from rank 0 of 4: 0 -> 1, 1 -> 2, 2 -> 3 at once, S bytes each.
// What the bulk round leaves out is the pipeline's fill (its first chunk crossing the path) and
// the route latencies along that path; NCCL's model charges the tree/Simple fill
// (tree_pipeline_fill_us; LL and LL128 forward inside a node at line granularity) and the call's
// hop latencies once, in the fixed latency (transfer_pricing.cc), and the route latencies beyond
// NCCL's hop (spine tiers, a what-if's slower links) are the zero-byte playback's longest path,
// returned here to be folded in. Before, flow played the tree in 512 KiB pieces with that fill and
// charged the fill again (tree/LL128 on mi300x-cluster-8 at 64 MiB: 2x the analytic time;
// h100-cluster-8 +48%, tree/Simple +31%), and the ring broadcast/reduce unpipelined, the whole
// buffer hop after hop (n-1 times the analytic time: +504% on dgx-h100).
#include <algorithm>

#include "flow_build.h"

namespace twinccl::sim::detail {
namespace {

// The step playback's time with no bytes: a transfer starts when its sender reached its step and
// arrives after its delay and route latency; a rank leaves a step when its receives arrived. Ranks
// advance through their steps as far as their receives allow (a worklist: each transfer is
// looked at a bounded number of times); -1 if some rank never gets through (not a valid schedule).
double latency_path_s(const FlowProgram& program, std::size_t first) {
  const std::size_t n = program.rank_steps.size();
  std::vector<double> at(n, 0.0);  // when each rank reached its current step
  std::vector<std::size_t> step(n, 0);
  std::vector<double> start(program.transfers.size() - first, -1.0);
  std::vector<std::size_t> work(n);
  for (std::size_t r = 0; r < n; ++r) work[r] = n - 1 - r;
  while (!work.empty()) {
    const std::size_t r = work.back();
    work.pop_back();
    const auto& steps = program.rank_steps[r];
    while (step[r] < steps.size()) {
      double leave = at[r];
      bool blocked = false;
      for (int t : steps[step[r]]) {
        const FlowTransfer& tr = program.transfers[static_cast<std::size_t>(t)];
        double& begun = start[static_cast<std::size_t>(t) - first];
        if (tr.src_rank == static_cast<int>(r)) {
          if (begun < 0.0) {  // the send starts now; its receiver may go on
            begun = at[r];
            work.push_back(static_cast<std::size_t>(tr.dst_rank));
          }
        } else if (begun < 0.0) {
          blocked = true;
        } else {
          const double latency = program.routes[static_cast<std::size_t>(tr.route)].latency_s;
          leave = std::max(leave, begun + tr.delay_s + latency);
        }
      }
      if (blocked) break;
      at[r] = leave;
      ++step[r];
    }
  }
  for (std::size_t r = 0; r < n; ++r) {
    if (step[r] < program.rank_steps[r].size()) return -1.0;
  }
  return at.empty() ? 0.0 : *std::max_element(at.begin(), at.end());
}

}  // namespace

double program_for_bulk_pipeline(const Schedule& schedule, const TransferCost& cost,
                                 RouteTable& routes, FlowProgram& program,
                                 const ChannelRanks& ranks) {
  const std::size_t first = program.transfers.size();
  program_from_schedule(schedule, cost, routes, program, ranks);
  const double path_s = latency_path_s(program, first);
  double longest_s = 0.0;  // what the round itself pays: each flow its own delay and latency
  for (std::size_t t = first; t < program.transfers.size(); ++t) {
    const FlowTransfer& tr = program.transfers[t];
    longest_s = std::max(longest_s,
                         tr.delay_s + program.routes[static_cast<std::size_t>(tr.route)].latency_s);
  }
  for (auto& steps : program.rank_steps) {  // one step per rank holding all its transfers
    std::vector<int> all;
    for (const auto& s : steps) all.insert(all.end(), s.begin(), s.end());
    steps.assign(1, std::move(all));
  }
  return std::max(0.0, path_s - longest_s);
}

}  // namespace twinccl::sim::detail
