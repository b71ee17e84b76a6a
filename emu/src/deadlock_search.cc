// The cycle search of the Checker's wait-for graph, and the cycle's description.
//
// How it works: every wait is an AND-wait (a collective needs all missing members, a recv its one
// peer), so any cycle of waiting agents is a deadlock: each needs the next to move first. One
// depth-first search over every waiting agent (white, on the path, done) follows the edges
// computed from current facts and stops at the first edge back to an agent on the path: the path
// from there is the cycle. Each agent is expanded once, and a collective's missing members are
// computed once per (communicator, seq), so a search is O(agents + edges) even when thousands of
// ranks wait in one meeting. Example, 2 ranks, blocking recv on both: (0,world) -recv-> user 1
// -inline-> (1,world) -recv-> user 0 -inline-> (0,world): "rank 0 waits in recv from rank 1
// (a.cc:10), while rank 1 waits in recv from rank 0 (a.cc:12)".
// The description lists every wait of a short cycle; of a long one the first kStepsShown waits,
// how many more, the last one and the cycle's ranks (the first kRanksShown), so a 4096-rank ring
// gives a message of a few KB, not 470 KB.
#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

#include "checker.h"

namespace twinccl::emu {

namespace {
constexpr std::size_t kStepsShown = 6;
constexpr std::size_t kRanksShown = 32;
}  // namespace

std::vector<std::pair<int, Checker::Edge>> Checker::find_any_cycle() {
  struct Frame {
    int node;
    std::vector<Edge> edges;
    std::size_t next = 0;
  };
  std::map<std::pair<const CommRecord*, std::uint64_t>, std::vector<Edge>> meetings;
  auto expand = [&](int node, std::vector<Edge>& out) {
    const Agent& a = agents_[static_cast<std::size_t>(node)];
    const Node& n = nodes_[static_cast<std::size_t>(node)];
    if (a.comm != nullptr && n.waiting && n.site.kind == WaitKind::collective) {
      auto key = std::make_pair(static_cast<const CommRecord*>(a.comm), n.site.seq);
      auto it = meetings.find(key);
      if (it == meetings.end()) {
        std::vector<Edge> missing;
        edges_of(node, missing);  // the waiter itself arrived, so it is never in the list
        it = meetings.emplace(key, std::move(missing)).first;
      }
      out = it->second;
      return;
    }
    edges_of(node, out);
  };
  enum : char { white = 0, on_path = 1, done = 2 };
  std::vector<char> color(agents_.size(), white);
  std::vector<std::size_t> depth(agents_.size(), 0);
  std::vector<Frame> stack;
  for (std::size_t start = 0; start < agents_.size(); ++start) {
    if (color[start] != white || !nodes_[start].waiting) continue;
    stack.push_back({static_cast<int>(start), {}, 0});
    expand(static_cast<int>(start), stack.back().edges);
    color[start] = on_path;
    depth[start] = 0;
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next == top.edges.size()) {
        color[static_cast<std::size_t>(top.node)] = done;
        stack.pop_back();
        continue;
      }
      Edge edge = top.edges[top.next++];
      auto to = static_cast<std::size_t>(edge.to);
      if (color[to] == done) continue;
      if (color[to] == on_path) {
        std::vector<std::pair<int, Edge>> cycle;
        for (std::size_t i = depth[to]; i < stack.size(); ++i)
          cycle.emplace_back(stack[i].node, stack[i].edges[stack[i].next - 1]);
        // Start at the lowest rank's wait, so that two searches (and the reader) see the cycle
        // the same way whether a rank's stream or its thread is the node on the path.
        auto key = [&](const std::pair<int, Edge>& step) {
          const Agent& a = agents_[static_cast<std::size_t>(step.first)];
          bool inline_step = std::string_view(step.second.verb) == "inline";
          return std::make_tuple(a.global_rank, inline_step, step.first);
        };
        auto first =
            std::min_element(cycle.begin(), cycle.end(),
                             [&](const auto& x, const auto& y) { return key(x) < key(y); });
        std::rotate(cycle.begin(), first, cycle.end());
        return cycle;
      }
      color[to] = on_path;
      depth[to] = stack.size();
      Frame frame{edge.to, {}, 0};
      expand(edge.to, frame.edges);
      stack.push_back(std::move(frame));
    }
  }
  return {};
}

std::string Checker::describe_cycle(const std::vector<std::pair<int, Edge>>& cycle) const {
  std::vector<std::size_t> waits;  // steps that are waits (not a thread running its stream inline)
  std::vector<int> ranks;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    if (std::string_view(cycle[i].second.verb) == "inline") continue;
    waits.push_back(i);
    int rank = agents_[static_cast<std::size_t>(cycle[i].first)].global_rank;
    if (ranks.empty() || ranks.back() != rank) ranks.push_back(rank);
  }
  bool cut = waits.size() > kStepsShown + 2;  // the first kStepsShown, "...", the last one
  std::string text;
  for (std::size_t k = 0; k < waits.size(); ++k) {
    if (cut && k == kStepsShown)
      text += ", ... (" + std::to_string(waits.size() - kStepsShown - 1) + " more wait(s))";
    if (cut && k >= kStepsShown && k + 1 < waits.size()) continue;
    const auto& [node, edge] = cycle[waits[k]];
    text += (text.empty() ? "" : ", while ") + describe_step(node, edge);
  }
  std::string message =
      "deadlock: " + text + " (a cycle in the wait-for graph: none of these can proceed";
  if (cut) {
    message += "; the cycle's " + std::to_string(ranks.size()) + " ranks in order: ";
    for (std::size_t i = 0; i < ranks.size() && i < kRanksShown; ++i)
      message += (i ? " -> " : "") + std::to_string(ranks[i]);
    if (ranks.size() > kRanksShown)
      message += " -> ... (" + std::to_string(ranks.size() - kRanksShown) + " more) -> " +
                 std::to_string(ranks.front());
  }
  return message + ")";
}

}  // namespace twinccl::emu
