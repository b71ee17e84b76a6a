// "tree" all-reduce: NCCL's double binary tree across nodes, a chain inside each node.
//
// How it works, 4 nodes of 1 rank (NCCL's btree over positions, graph/trees.cc: the root has one
// child; tree 1 mirrors the node numbering, or shifts it by one for an odd node count, so a node
// that is inner in one tree is a leaf in the other):
//   tree 0 (first half):   0 -> 2 -> {1, 3}      tree 1 (second half):   3 -> 1 -> {2, 0}
//   (root -> its one child -> that child's two children; node 0 is inner in tree 0 only)
// Each half is reduced up its tree and broadcast back down, both halves at the same time.
// Inside a node of k ranks the chain runs local k-1 -> ... -> 1 -> 0 (the node's leader) going
// up and 0 -> 1 -> ... -> k-1 going down; only leaders talk across nodes.
// Logical steps (all ranks agree, so pieces pipeline as a wavefront): chain up at steps
// 0..k-2; a leader sends up at U = (k-1) + 2*height + (1 if it is its parent's second child); the
// root starts down at B = U(root); a leader at depth t sends to its first child at B+2t, second
// child at B+2t+1, and its chain at B+2t onwards. Fold order of an element of half h: inside each
// node x[k-1] op x[k-2] ... op x[0] (local ranks, received first); then at each leader acc = child
// (op) acc, children in order of U (the lower subtree first); the root's last fold is finalized.
#include <algorithm>

#include "algorithms/algorithm_list.h"
#include "algorithms/schedule_builder.h"

namespace twinccl::algo {
namespace {

// NCCL's double binary tree over node positions (graph/trees.cc): tree 0 is NCCL's btree over
// positions = nodes (the root has one child; a position's parent and children follow its lowest
// set bit), tree 1 the same over positions mirrored (even node counts) or shifted by one (odd), so
// that a node inner in one tree is a leaf in the other.
struct NodeTree {
  int nodes = 1;
  bool second = false;  // tree 1
  int position(int node) const {
    if (!second) return node;
    return nodes % 2 == 0 ? nodes - 1 - node : (node - 1 + nodes) % nodes;
  }
  int node_at(int pos) const {
    if (!second) return pos;
    return nodes % 2 == 0 ? nodes - 1 - pos : (pos + 1) % nodes;
  }
  int low_bit(int pos) const {  // the root's: the smallest power of two >= nodes
    int bit = 1;
    while (bit < nodes && (bit & pos) == 0) bit <<= 1;
    return bit;
  }
  int parent(int pos) const {
    const int bit = low_bit(pos);
    const int up = (pos ^ bit) | (bit << 1);
    return up < nodes ? up : pos ^ bit;
  }
  std::vector<int> children(int pos) const {  // ascending: the lower one first
    std::vector<int> c;
    const int half = low_bit(pos) >> 1;
    if (half == 0) return c;
    if (pos > 0) c.push_back(pos - half);
    for (int step = half; step > 0; step >>= 1) {
      if (pos + step < nodes) {
        c.push_back(pos + step);
        break;
      }
    }
    return c;
  }
  int height(int pos) const {
    int h = 0;
    for (int c : children(pos)) h = std::max(h, 1 + height(c));
    return h;
  }
  int depth(int pos) const {
    int d = 0;
    for (int p = pos; p != 0; p = parent(p)) ++d;
    return d;
  }
  // 0 for its parent's first child, 1 for the second (the steps it sends up and receives down).
  int child_index(int pos) const {
    if (pos == 0) return 0;
    const std::vector<int> siblings = children(parent(pos));
    return siblings.size() == 2 && siblings[1] == pos ? 1 : 0;
  }
};

void add_half(LogicalSchedule& ls, const NodeTree& tree, int rpn, int rank, Slice in_half,
              Slice out_half) {
  const int node = rank / rpn;
  const int local = rank % rpn;
  const auto leader = [&](int pos) { return tree.node_at(pos) * rpn; };
  const int pos = tree.position(node);
  const auto chain_up = static_cast<std::size_t>(rpn - 1);
  const auto up_step = [&](int p) {
    return chain_up + static_cast<std::size_t>(2 * tree.height(p) + tree.child_index(p));
  };
  const std::size_t down = up_step(0);
  const auto send_down_step = [&](int p) {
    return down + static_cast<std::size_t>(2 * tree.depth(p));
  };
  const bool root = pos == 0;
  const std::vector<int> kids = tree.children(pos);
  // Is rank's last fold the final one (finalize)?
  const bool root_leader = root && local == 0;

  // ---- reduce up ----
  Slice current = in_half;
  if (local > 0) {
    if (local + 1 < rpn) {
      ls.add(static_cast<std::size_t>(rpn - 2 - local),
             recv_reduce_op(rank + 1, in_half, out_half));
      current = out_half;
    }
    ls.add(static_cast<std::size_t>(rpn - 1 - local), send_op(rank - 1, current));
  } else {
    std::vector<int> order = kids;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return up_step(a) < up_step(b); });
    if (rpn > 1) {
      const bool last = root_leader && order.empty();
      ls.add(static_cast<std::size_t>(rpn - 2), recv_reduce_op(rank + 1, in_half, out_half, last));
      current = out_half;
    }
    for (std::size_t i = 0; i < order.size(); ++i) {
      const bool last = root_leader && i + 1 == order.size();
      ls.add(up_step(order[i]), recv_reduce_op(leader(order[i]), current, out_half, last));
      current = out_half;
    }
    if (!root) ls.add(up_step(pos), send_op(leader(tree.parent(pos)), current));
  }

  // ---- broadcast down ----
  std::size_t have = 0;  // first step at which this rank may forward the result
  if (local == 0) {
    if (!root) {
      const int parent = tree.parent(pos);
      ls.add(send_down_step(parent) + static_cast<std::size_t>(tree.child_index(pos)),
             recv_op(leader(parent), out_half));
    }
    have = send_down_step(pos);
    for (std::size_t i = 0; i < kids.size(); ++i) {
      ls.add(have + i, send_op(leader(kids[i]), out_half));
    }
  } else {
    const std::size_t start = send_down_step(pos);
    ls.add(start + static_cast<std::size_t>(local - 1), recv_op(rank - 1, out_half));
    have = start + static_cast<std::size_t>(local);
  }
  if (local + 1 < rpn) ls.add(have, send_op(rank + 1, out_half));
}

RankSchedule all_reduce_tree(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  LogicalSchedule ls;
  if (spec.nranks == 1) {
    add_local_copy(ls, spec, in(0, spec.count), out(0, spec.count));
    return ls.lower(params, Pipelining::overlapped);
  }
  const int rpn = ranks_per_node(spec, params);
  for (int half = 0; half < 2; ++half) {
    const ElementRange r = ring_chunk(spec.count, 2, half);
    const NodeTree tree{.nodes = spec.nranks / rpn, .second = half == 1};
    add_half(ls, tree, rpn, rank, in(r.begin, r.size()), out(r.begin, r.size()));
  }
  return ls.lower(params, Pipelining::overlapped);
}

}  // namespace

const Algorithm& tree_algorithm() {
  static const ListedAlgorithm algorithm(
      "tree",
      "NCCL's double binary tree across nodes (mirrored or shifted second tree), chain inside each "
      "node; "
      "half the data per tree, reduce up then broadcast down, pipelined",
      {{OpKind::all_reduce, all_reduce_tree}}, node_layout_problem);
  return algorithm;
}

}  // namespace twinccl::algo
