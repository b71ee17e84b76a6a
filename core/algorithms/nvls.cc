// "nvls": NVLink SHARP-like in-switch reduction, modelled in the IR as a direct reduce-scatter
// followed by a direct all-gather. The simulator times it as switch traffic (each rank's data
// crosses its link once each way); the emulator executes it as written here.
//
// How it works, 4 ranks, data split in chunks A B C D (ring_chunk), rank 1 owns B:
//   step 0:   1 sends A -> 0, C -> 2, D -> 3 and pulls B of ranks 2, 3, 0 into scratch
//   steps 1-3: B = ((B2 op B3) op B0) op B1, written to output, finalized
//   step 4:   1 sends B to 0, 2, 3 and receives A, C, D into output
// Fold order of chunk c: x[c+1], x[c+2], ..., x[c], the ring's, so results match "ring" bit for
// bit. reduce_scatter and all_gather are the direct halves alone.
#include "algorithms/algorithm_list.h"
#include "algorithms/direct.h"

namespace twinccl::algo {
namespace {

RankSchedule all_reduce_nvls(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  const int n = spec.nranks;
  std::vector<Block> chunks;
  for (int c = 0; c < n; ++c) {
    const ElementRange r = ring_chunk(spec.count, n, c);
    chunks.push_back({r.begin, r.size()});
  }
  const Block mine = chunks[static_cast<std::size_t>(rank)];
  LogicalSchedule ls;
  const std::size_t used =
      add_direct_reduce_scatter(ls, n, rank, chunks, slice_of(BufferKind::output, mine), 0);
  add_direct_all_gather(ls, n, rank, slice_of(BufferKind::output, mine), chunks, used);
  return ls.lower(params, Pipelining::overlapped);
}

}  // namespace

const Algorithm& nvls_algorithm() {
  static const ListedAlgorithm algorithm(
      "nvls",
      "in-switch reduction (NVLink SHARP-like): direct reduce-scatter in ring fold order, then "
      "direct all-gather; timed as switch traffic",
      {{OpKind::all_reduce, all_reduce_nvls},
       {OpKind::reduce_scatter, reduce_scatter_direct},
       {OpKind::all_gather, all_gather_direct}});
  return algorithm;
}

}  // namespace twinccl::algo
