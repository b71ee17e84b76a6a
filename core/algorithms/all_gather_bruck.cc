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
namespace {

RankSchedule all_gather_bruck(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  const int n = spec.nranks;
  const std::vector<Block> blocks = big_buffer_blocks(spec);
  const auto block = [&](int b) { return blocks[static_cast<std::size_t>(wrap(b, n))]; };
  LogicalSchedule ls;
  ls.add(0, copy_op(in(0, block(rank).count), slice_of(BufferKind::output, block(rank))));
  std::size_t step = 0;
  for (int d = 1; d < n; d *= 2, ++step) {
    const int m = std::min(d, n - d);
    std::vector<Block> give, take;
    for (int j = 0; j < m; ++j) {
      give.push_back(block(rank + j));
      take.push_back(block(rank + d + j));
    }
    if (step == 0) {
      ls.add(step, send_op(wrap(rank - d, n), in(0, block(rank).count)));
    } else {
      for (const Slice& s : merged_slices(BufferKind::output, give)) {
        ls.add(step, send_op(wrap(rank - d, n), s));
      }
    }
    for (const Slice& s : merged_slices(BufferKind::output, take)) {
      ls.add(step, recv_op(wrap(rank + d, n), s));
    }
  }
  return ls.lower(params, Pipelining::sequential);
}

}  // namespace

const Algorithm& bruck_algorithm() {
  static const ListedAlgorithm algorithm(
      "bruck", "Bruck all-gather: ceil(log2 n) steps, distance doubling, blocks placed directly",
      {{OpKind::all_gather, all_gather_bruck}, {OpKind::all_gather_v, all_gather_bruck}});
  return algorithm;
}

}  // namespace twinccl::algo
