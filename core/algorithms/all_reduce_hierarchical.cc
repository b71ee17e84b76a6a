// "hierarchical" all-reduce: ring reduce-scatter inside each node, ring all-reduce across nodes
// between the ranks of equal local rank, ring all-gather inside each node.
//
// How it works, 4 ranks, 2 per node (node 0: ranks 0 1, node 1: ranks 2 3), data halves H0 H1:
//   phase 1 (node rings, 1 step): rank 0 ends with H0 of node 0 (x1 op x0), rank 1 with H1
//            (x0 op x1); ranks 2, 3 likewise for node 1.
//   phase 2 (ring 0 <-> 2 on H0, ring 1 <-> 3 on H1): a ring all-reduce of that half split in
//            2 sub-chunks: 2(nodes-1) steps; the last fold of each sub-chunk is finalized.
//   phase 3 (node rings, 1 step): all-gather the halves inside each node.
// Fold order of an element of local chunk l, sub-chunk j: the node sums in node-ring order
// (local l+1, ..., l), then across nodes in ring order (node j+1, ..., j) of those node sums.
// Each phase is pipelined on its own (its pieces do not line up with the next phase's).
#include "algorithms/algorithm_list.h"
#include "algorithms/ring.h"

namespace twinccl::algo {
namespace {

RankSchedule all_reduce_hierarchical(const CollectiveSpec& spec, const AlgorithmParams& params,
                                     int rank) {
  const int n = spec.nranks;
  const int rpn = ranks_per_node(spec, params);
  const int nodes = n / rpn;
  if (n == 1) {
    LogicalSchedule ls;
    add_local_copy(ls, spec, in(0, spec.count), out(0, spec.count));
    return ls.lower(params, Pipelining::overlapped);
  }
  const int node = rank / rpn;
  const int local = rank % rpn;
  RingPosition in_node;
  for (int l = 0; l < rpn; ++l) in_node.members.push_back(node * rpn + l);
  in_node.me = local;
  RingPosition across;
  for (int j = 0; j < nodes; ++j) across.members.push_back(j * rpn + local);
  across.me = node;
  const ElementRange all{0, spec.count};
  const ElementRange chunk = ring_chunk(spec.count, rpn, local);

  LogicalSchedule reduce_in_node, across_nodes, gather_in_node;
  add_ring_reduce_scatter_chunks(reduce_in_node, in_node, all, BufferKind::input, nodes == 1, 0);
  const BufferKind source = rpn == 1 ? BufferKind::input : BufferKind::output;
  add_ring_reduce_scatter_chunks(across_nodes, across, chunk, source, true, 0);
  add_ring_all_gather_chunks(across_nodes, across, chunk, static_cast<std::size_t>(nodes - 1));
  add_ring_all_gather_chunks(gather_in_node, in_node, all, 0);
  return then(then(reduce_in_node.lower(params, Pipelining::overlapped),
                   across_nodes.lower(params, Pipelining::overlapped)),
              gather_in_node.lower(params, Pipelining::overlapped));
}

}  // namespace

const Algorithm& hierarchical_algorithm() {
  static const ListedAlgorithm algorithm(
      "hierarchical",
      "ring reduce-scatter inside each node, ring all-reduce across nodes per local rank, "
      "ring all-gather inside each node (ranks_per_node)",
      {{OpKind::all_reduce, all_reduce_hierarchical}}, node_layout_problem);
  return algorithm;
}

}  // namespace twinccl::algo
