// "bruck": Bruck's all-gather (and all_gather_v) in ceil(log2 n) steps, distances doubling.
//
// How it works, 4 ranks; rank r holds the blocks r, r+1, ... (mod n) it has gathered so far:
//   step 0, distance 1: r sends block r to r-1 and receives block r+1 from r+1  -> r, r+1
//   step 1, distance 2: r sends blocks r, r+1 to r-2, receives r+2, r+3 from r+2 -> all four
// With n not a power of two the last step sends only the n - d blocks still missing. Blocks go
// straight to their place in the output (no final rotation); neighbouring blocks that touch in
// memory travel as one message. Step 0 sends from the input (the own-block copy writes output
// in the same step).
#include "algorithms/algorithm_list.h"
#include "algorithms/schedule_builder.h"

namespace twinccl::algo {

RankSchedule log_step_all_gather(const CollectiveSpec& spec, const AlgorithmParams& params,
                                 int rank, const std::vector<int>& distance,
                                 const std::vector<std::vector<int>>& held) {
  const int n = spec.nranks;
  const std::vector<Block> blocks = big_buffer_blocks(spec);
  const auto block = [&](int b) { return blocks[static_cast<std::size_t>(wrap(b, n))]; };
  LogicalSchedule ls;
  ls.add(0, copy_op(in(0, block(rank).count), slice_of(BufferKind::output, block(rank))));
  for (std::size_t k = 0; k < distance.size(); ++k) {
    const int d = distance[k];
    std::vector<Block> give, take;
    for (int j : held[k]) {
      if (j + d >= n) continue;
      give.push_back(block(rank + j));
      take.push_back(block(rank + d + j));
    }
    if (k == 0) {
      ls.add(k, send_op(wrap(rank - d, n), in(0, block(rank).count)));
    } else {
      for (const Slice& s : merged_slices(BufferKind::output, give)) {
        ls.add(k, send_op(wrap(rank - d, n), s));
      }
    }
    for (const Slice& s : merged_slices(BufferKind::output, take)) {
      ls.add(k, recv_op(wrap(rank + d, n), s));
    }
  }
  return ls.lower(params, Pipelining::sequential);
}

namespace {

// Distances 1, 2, 4, ...; before distance d a rank holds the offsets 0 .. d-1.
RankSchedule all_gather_bruck(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  std::vector<int> distance;
  std::vector<std::vector<int>> held;
  for (int d = 1; d < spec.nranks; d *= 2) {
    distance.push_back(d);
    held.emplace_back();
    for (int j = 0; j < d; ++j) held.back().push_back(j);
  }
  return log_step_all_gather(spec, params, rank, distance, held);
}

}  // namespace

const Algorithm& bruck_algorithm() {
  static const ListedAlgorithm algorithm(
      "bruck", "Bruck all-gather: ceil(log2 n) steps, distance doubling, blocks placed directly",
      {{OpKind::all_gather, all_gather_bruck}, {OpKind::all_gather_v, all_gather_bruck}});
  return algorithm;
}

}  // namespace twinccl::algo
