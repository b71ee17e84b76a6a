// ring_orders: ring orders over GPUs linked directly to each other (no switch: the MI300X xGMI
// mesh, a torus), so that a flow ring's channels use every GPU link, as the analytic model (and
// RCCL's and NCCL's graph search) assumes. One ring order would push every channel's hop r -> r+1
// through the same single link: 7x too slow on the 8-GPU mesh.
//
// How it works. The call's GPUs and their direct GPU-GPU links are a directed graph (a full-duplex
// link is two arcs). When every GPU has the same k >= 3 neighbours (a plain cycle of GPUs keeps
// its one ring order), k arc-disjoint directed Hamiltonian cycles use every arc once; channel c
// plays cycle c mod k, so k channels load every link direction equally (ChannelRanks: schedule
// rank r plays GPU cycle[r]).
// * A 2D torus numbered row by row (rank = row * C + col, R, C >= 3): the "right or down" torus.
//   Cycle 1: GPUs on the diagonals (row + col) mod gcd(R, C) < a step down, the others right;
//   cycle 2 the swap; cycles 3 and 4 the two reversed (left/up). Every GPU has one in-arc in each
//   (its left and upper neighbours lie on the same diagonal), and for some a both are single
//   cycles (every square torus; not when gcd(R, C) = 1). 4x4, a = 1 (D: down, R: right):
//       D R R R        cycle 1: 0 4 5 6 7 11 8 9 10 14 15 12 13 1 2 3, then back to 0
//       R R R D
//       R R D R
//       R D R R
// * A 4-regular graph the construction misses (e.g. a torus with gcd(R, C) = 1, 4x5): two
//   edge-disjoint undirected Hamiltonian cycles (SplitSearch), each walked both ways.
// * Any other regular graph (the full mesh K8: 7 cycles; a torus still missed): cycles
//   found one after another by depth-first search, fewest onward arcs first (Warnsdorff), within
//   a step budget (K8: 240 steps; K4 and K6 have no such decomposition (Tillson 1980): none).
// Across nodes (rail_ranks) channel c enters every node at its GPU c. A node of g fully linked
// GPUs (g even) is crossed from its GPU c to its GPU c + g/2 through local GPUs c + a_j, where a
// is 0, -1, +1, -2, +2, ... (steps -1, +2, -3, +4, ..., -(g-1): distinct mod g, a sequencing of
// Z_g, Gordon 1961), so the g channels' paths use each of the node's g(g-1) arcs once. g = 8:
// a = 0 7 1 6 2 5 3 4.
#include <algorithm>
#include <array>
#include <map>
#include <numeric>

#include "flow_build.h"

namespace twinccl::sim::detail {
namespace {

constexpr int kMaxSearchGpus = 32;      // recursion depth <= GPUs x neighbours
constexpr int kMaxSplitGpus = 256;      // recursion depth <= GPUs
constexpr long kSearchBudget = 50'000;  // DFS steps (torus 4x4: ~22k; K8: 240)

using Graph = std::vector<std::vector<int>>;  // call rank -> directly linked call ranks, ascending

// Direct GPU-GPU links between the call's GPUs (parallel links counted once).
Graph direct_links(const topo::Topology& topology, std::span<const int> gpus) {
  std::map<topo::VertexId, int> call_rank;
  for (std::size_t i = 0; i < gpus.size(); ++i)
    call_rank[topology.gpu(gpus[i])] = static_cast<int>(i);
  Graph g(gpus.size());
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const topo::VertexId v = topology.gpu(gpus[i]);
    for (topo::LinkId l : topology.links_of(v)) {
      const auto it = call_rank.find(topology.other_end(l, v));
      if (it != call_rank.end() && it->second != static_cast<int>(i)) g[i].push_back(it->second);
    }
    std::sort(g[i].begin(), g[i].end());
    g[i].erase(std::unique(g[i].begin(), g[i].end()), g[i].end());
  }
  return g;
}

// k arc-disjoint directed Hamiltonian cycles of a k-regular graph, each starting at vertex 0.
class CycleSearch {
 public:
  explicit CycleSearch(const Graph& graph)
      : g_(graph), n_(static_cast<int>(graph.size())), used_(graph.size() * graph.size(), 0) {}

  std::vector<std::vector<int>> run() {
    path_.clear();
    on_path_.assign(static_cast<std::size_t>(n_), 0);
    if (!start(0)) cycles_.clear();
    return cycles_;
  }

 private:
  char& used(int v, int w) { return used_[static_cast<std::size_t>(v * n_ + w)]; }
  int free_onward(int w) {
    int count = 0;
    for (int x : g_[static_cast<std::size_t>(w)]) count += !used(w, x) && !on_path_[x];
    return count;
  }
  bool start(std::size_t cycle) {
    if (cycle == g_[0].size()) return true;
    path_ = {0};
    on_path_.assign(static_cast<std::size_t>(n_), 0);
    on_path_[0] = 1;
    return extend(cycle);
  }
  bool extend(std::size_t cycle) {
    if (++steps_ > kSearchBudget) return false;
    const int v = path_.back();
    if (static_cast<int>(path_.size()) == n_) {
      const auto& nv = g_[static_cast<std::size_t>(v)];
      if (used(v, 0) || !std::binary_search(nv.begin(), nv.end(), 0)) return false;
      used(v, 0) = 1;
      cycles_.push_back(path_);
      const std::vector<int> kept = path_;
      if (start(cycle + 1)) return true;
      path_ = kept;
      on_path_.assign(static_cast<std::size_t>(n_), 0);
      for (int x : path_) on_path_[static_cast<std::size_t>(x)] = 1;
      cycles_.pop_back();
      used(v, 0) = 0;
      return false;
    }
    std::vector<std::pair<int, int>> next;  // (free onward arcs, vertex)
    for (int w : g_[static_cast<std::size_t>(v)]) {
      if (!used(v, w) && !on_path_[static_cast<std::size_t>(w)]) next.emplace_back(0, w);
    }
    for (auto& [onward, w] : next) onward = free_onward(w);
    std::stable_sort(next.begin(), next.end());
    for (const auto& [onward, w] : next) {
      used(v, w) = 1;
      on_path_[static_cast<std::size_t>(w)] = 1;
      path_.push_back(w);
      if (extend(cycle)) return true;
      path_.pop_back();
      on_path_[static_cast<std::size_t>(w)] = 0;
      used(v, w) = 0;
      if (steps_ > kSearchBudget) return false;
    }
    return false;
  }

  const Graph& g_;
  int n_;
  std::vector<char> used_;  // [v * n + w]: arc v -> w taken by a cycle
  std::vector<char> on_path_;
  std::vector<int> path_;
  std::vector<std::vector<int>> cycles_;
  long steps_ = 0;
};

// Is `g` the R x C torus with rank = row * C + col (every GPU linked to its 4 neighbours)?
bool is_torus(const Graph& g, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      std::vector<int> want = {((r + 1) % rows) * cols + c, ((r + rows - 1) % rows) * cols + c,
                               r * cols + (c + 1) % cols, r * cols + (c + cols - 1) % cols};
      std::sort(want.begin(), want.end());
      if (g[static_cast<std::size_t>(r * cols + c)] != want) return false;
    }
  }
  return true;
}

// The torus's 4 cycles (how it works, above), or none when no diagonal split gives single cycles.
std::vector<std::vector<int>> torus_cycles(int rows, int cols) {
  const int d = std::gcd(rows, cols);
  const int n = rows * cols;
  for (int a = 1; a < d; ++a) {
    std::vector<std::vector<int>> out;
    for (const bool swap : {false, true}) {
      std::vector<int> cycle = {0};
      int v = 0;
      for (int i = 0; i < n; ++i) {
        const int r = v / cols, c = v % cols;
        const bool down = (((r + c) % d) < a) != swap;
        v = down ? ((r + 1) % rows) * cols + c : r * cols + (c + 1) % cols;
        if (v == 0) break;
        cycle.push_back(v);
      }
      if (v != 0 || static_cast<int>(cycle.size()) != n) break;
      out.push_back(cycle);
      std::reverse(cycle.begin() + 1, cycle.end());  // the same ring walked left/up
      out.push_back(std::move(cycle));
    }
    if (out.size() == 4) return out;
  }
  return {};
}

// Two edge-disjoint undirected Hamiltonian cycles of a 4-regular graph (a torus, Kotzig 1973):
// a Hamiltonian cycle found depth-first (fewest onward neighbours first) whose complement is one
// cycle too; each walked both ways gives 4 directed cycles. Empty when the budget runs out.
class SplitSearch {
 public:
  explicit SplitSearch(const Graph& graph)
      : g_(graph), n_(static_cast<int>(graph.size())), on_path_(graph.size(), 0) {}

  std::vector<std::vector<int>> run() {
    path_ = {0};
    on_path_[0] = 1;
    if (!extend()) return {};
    std::vector<int> other = complement_;
    std::vector<std::vector<int>> out = {path_, path_, other, other};
    std::reverse(out[1].begin() + 1, out[1].end());
    std::reverse(out[3].begin() + 1, out[3].end());
    return out;
  }

 private:
  // The cycle left by path_'s edges, from vertex 0, into complement_; false unless Hamiltonian.
  bool complement_is_cycle() {
    const auto un = static_cast<std::size_t>(n_);
    std::vector<std::array<int, 2>> left(un);
    for (std::size_t i = 0; i < un; ++i) {
      const int v = path_[i], prev = path_[(i + un - 1) % un], next = path_[(i + 1) % un];
      int k = 0;
      for (int w : g_[static_cast<std::size_t>(v)]) {
        if (w != prev && w != next)
          left[static_cast<std::size_t>(v)][static_cast<std::size_t>(k++)] = w;
      }
    }
    complement_ = {0};
    for (int prev = 0, v = left[0][0]; v != 0;) {
      if (complement_.size() == un) return false;
      complement_.push_back(v);
      const auto& two = left[static_cast<std::size_t>(v)];
      const int next = two[0] == prev ? two[1] : two[0];
      prev = v;
      v = next;
    }
    return complement_.size() == un;
  }
  bool extend() {
    if (++steps_ > kSearchBudget) return false;
    const int v = path_.back();
    const auto& nv = g_[static_cast<std::size_t>(v)];
    if (static_cast<int>(path_.size()) == n_) {
      return std::binary_search(nv.begin(), nv.end(), 0) && complement_is_cycle();
    }
    std::vector<std::pair<int, int>> next;  // (unvisited neighbours, vertex)
    for (int w : nv) {
      if (on_path_[static_cast<std::size_t>(w)]) continue;
      int onward = 0;
      for (int x : g_[static_cast<std::size_t>(w)])
        onward += !on_path_[static_cast<std::size_t>(x)];
      next.emplace_back(onward, w);
    }
    std::stable_sort(next.begin(), next.end());
    for (const auto& [onward, w] : next) {
      on_path_[static_cast<std::size_t>(w)] = 1;
      path_.push_back(w);
      if (extend()) return true;
      path_.pop_back();
      on_path_[static_cast<std::size_t>(w)] = 0;
      if (steps_ > kSearchBudget) return false;
    }
    return false;
  }

  const Graph& g_;
  int n_;
  std::vector<char> on_path_;
  std::vector<int> path_, complement_;
  long steps_ = 0;
};

}  // namespace

ChannelRanks mesh_ranks(const topo::Topology& topology, std::span<const int> gpus) {
  ChannelRanks out;
  const int n = static_cast<int>(gpus.size());
  if (n < 3) return out;
  const Graph g = direct_links(topology, gpus);
  const std::size_t k = g[0].size();
  if (k < 3) return out;  // a cycle of GPUs is its own ring (one order, as the flow tests pin)
  for (const auto& links : g) {
    if (links.size() != k) return out;
  }
  std::vector<std::vector<int>> cycles;
  if (k == 4) {
    for (int rows = 3; rows * 3 <= n && cycles.empty(); ++rows) {
      if (n % rows == 0 && is_torus(g, rows, n / rows)) cycles = torus_cycles(rows, n / rows);
    }
  }
  // A full mesh of 4 or 6 has no decomposition (Tillson): skip the search's whole budget (~3 ms,
  // paid by every call of such a sub-communicator).
  const bool impossible = k + 1 == gpus.size() && (n == 4 || n == 6);
  if (cycles.empty() && k == 4 && n <= kMaxSplitGpus) cycles = SplitSearch(g).run();
  if (cycles.empty() && !impossible && n <= kMaxSearchGpus) cycles = CycleSearch(g).run();
  for (const auto& cycle : cycles) {
    std::vector<int> perm;
    perm.reserve(cycle.size());
    for (int i : cycle) perm.push_back(gpus[static_cast<std::size_t>(i)]);
    out.perms.push_back(std::move(perm));
  }
  out.direct_links = !out.perms.empty();
  return out;
}

std::vector<int> node_path_offsets(const topo::Topology& topology,
                                   std::span<const topo::VertexId> node_gpus) {
  const int g = static_cast<int>(node_gpus.size());
  std::vector<int> offsets(static_cast<std::size_t>(g));
  std::iota(offsets.begin(), offsets.end(), 0);
  if (g < 4 || g % 2 != 0) return offsets;
  for (topo::VertexId v : node_gpus) {  // every pair linked directly?
    std::vector<topo::VertexId> peers;
    for (topo::LinkId l : topology.links_of(v)) peers.push_back(topology.other_end(l, v));
    for (topo::VertexId w : node_gpus) {
      if (w != v && std::find(peers.begin(), peers.end(), w) == peers.end()) return offsets;
    }
  }
  for (int j = 1; j < g; ++j) {  // steps -1, +2, -3, ...
    const int step = j % 2 == 1 ? g - j : j;
    offsets[static_cast<std::size_t>(j)] = (offsets[static_cast<std::size_t>(j - 1)] + step) % g;
  }
  return offsets;
}

}  // namespace twinccl::sim::detail
