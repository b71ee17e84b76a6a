// The cycle search of the Checker's wait-for graph.
//
// How it works: every wait is an AND-wait (a collective needs all missing members, a recv its one
// peer), so any cycle of waiting agents is a deadlock: each needs the next to move first. A
// depth-first search from the polling agent follows the edges computed from current facts and
// stops at the first path back to it; agents already explored without reaching it are skipped.
// Example, 2 ranks, blocking recv on both: (0,world) -recv-> user 1 -inline-> (1,world) -recv->
// user 0 -inline-> (0,world): "rank 0 waits in recv from rank 1 (a.cc:10), while rank 1 waits in
// recv from rank 0 (a.cc:12)". The graph has a handful of nodes per rank, so this is microseconds.
#include <vector>

#include "checker.h"

namespace twinccl::emu {

std::vector<std::pair<int, Checker::Edge>> Checker::find_cycle(int from) {
  struct Frame {
    int node;
    std::vector<Edge> edges;
    std::size_t next = 0;
  };
  std::vector<char> seen(agents_.size(), 0);
  std::vector<Frame> stack;
  stack.push_back({from, {}, 0});
  edges_of(from, stack.back().edges);
  seen[static_cast<std::size_t>(from)] = 1;
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next == top.edges.size()) {
      stack.pop_back();
      continue;
    }
    Edge edge = top.edges[top.next++];
    if (edge.to == from) {
      std::vector<std::pair<int, Edge>> cycle;
      for (std::size_t i = 0; i < stack.size(); ++i) {
        // The edge each frame took is the one just before its `next`.
        cycle.emplace_back(stack[i].node, stack[i].edges[stack[i].next - 1]);
      }
      return cycle;
    }
    if (seen[static_cast<std::size_t>(edge.to)]) continue;
    seen[static_cast<std::size_t>(edge.to)] = 1;
    Frame frame{edge.to, {}, 0};
    edges_of(edge.to, frame.edges);
    stack.push_back(std::move(frame));
  }
  return {};
}

}  // namespace twinccl::emu
