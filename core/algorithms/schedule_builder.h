// Private helpers every algorithm uses to write its per-rank schedule.
//
//   LogicalSchedule ls;
//   ls.add(0, send_op(next, in(0, n)));          // logical step 0: send my input to `next`
//   ls.add(0, recv_op(prev, out(0, n)));
//   RankSchedule rs = ls.lower(params, Pipelining::overlapped);
//
// An algorithm describes whole transfers in *logical* steps. `lower` then splits every operation
// into params.channels parts (StepOp::channel = part, same peers, so results never depend on the
// channel count) and each part into pieces of at most params.chunk_elements elements:
//   * overlapped: piece p of logical step s lands in step s + p (a wavefront, as NCCL pipelines a
//     ring). Valid when piece p of step s+1 only needs pieces <= p of earlier steps over the same
//     element ranges, and when every send and its recv sit in the same logical step.
//   * sequential: piece p of logical step s gets its own step after piece p-1 (no overlap).
// Operations of zero elements and empty steps are dropped.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "twinccl/algorithms.h"
#include "twinccl/schedule.h"

namespace twinccl::algo {

struct Block {
  std::size_t offset = 0;  // elements
  std::size_t count = 0;   // elements
};

inline Slice in(std::size_t offset, std::size_t count) {
  return {BufferKind::input, offset, count};
}
inline Slice out(std::size_t offset, std::size_t count) {
  return {BufferKind::output, offset, count};
}
inline Slice scratch(std::size_t offset, std::size_t count) {
  return {BufferKind::scratch, offset, count};
}
inline Slice slice_of(BufferKind buffer, Block block) {
  return {buffer, block.offset, block.count};
}

StepOp send_op(int peer, Slice src);
StepOp recv_op(int peer, Slice dst);
StepOp recv_reduce_op(int peer, Slice local, Slice dst, bool finalize = false);
StepOp copy_op(Slice src, Slice dst, bool finalize = false);
StepOp reduce_op(Slice a, Slice b, Slice dst, bool finalize = false);

// Elements an operation moves or computes.
std::size_t op_count(const StepOp& op);

enum class Pipelining { overlapped, sequential };

class LogicalSchedule {
 public:
  void add(std::size_t step, const StepOp& op);
  void need_scratch(std::size_t elements);
  RankSchedule lower(const AlgorithmParams& params, Pipelining pipelining) const;

 private:
  std::vector<std::vector<StepOp>> steps_;
  std::size_t scratch_count_ = 0;
};

// Runs `later` after every step of `first` (a full barrier between phases whose pieces do not
// line up, e.g. a node ring followed by a cross-node ring on sub-chunks). Scratch: the larger.
RankSchedule then(RankSchedule first, const RankSchedule& later);

// (a mod n) in [0, n) for negative a too.
inline int wrap(int a, int n) { return ((a % n) + n) % n; }

// Node-aware algorithms (tree, hierarchical): ranks per node (0 in params = one node), and why the
// layout does not fit (empty when it does).
inline int ranks_per_node(const CollectiveSpec& spec, const AlgorithmParams& params) {
  return params.ranks_per_node == 0 ? spec.nranks : params.ranks_per_node;
}
std::string node_layout_problem(const CollectiveSpec& spec, const AlgorithmParams& params);

// An algorithm as data: its name, one line for `--algo help`, the schedule generator of each
// collective it serves (in the order `collectives()` lists them; no generator: no steps, as a
// barrier the emulator synchronises by itself) and an optional further check of the call (the
// node-aware tree and hierarchical: node_layout_problem).
class ListedAlgorithm final : public Algorithm {
 public:
  using Generate = RankSchedule (*)(const CollectiveSpec&, const AlgorithmParams&, int);
  using Check = std::string (*)(const CollectiveSpec&, const AlgorithmParams&);
  struct Serves {
    OpKind kind;
    Generate generate;
  };
  ListedAlgorithm(std::string_view name, std::string_view description, std::vector<Serves> serves,
                  Check check = nullptr)
      : name_(name), description_(description), serves_(std::move(serves)), check_(check) {}
  std::string_view name() const override { return name_; }
  std::string_view description() const override { return description_; }
  std::vector<OpKind> collectives() const override;
  std::string why_not(const CollectiveSpec& spec, const AlgorithmParams& params) const override;
  RankSchedule generate(const CollectiveSpec& spec, const AlgorithmParams& params,
                        int rank) const override;

 private:
  std::string_view name_, description_;
  std::vector<Serves> serves_;
  Check check_;
};

// A log-step all-gather (bruck, pat; all_gather_bruck.cc): at step k, distance[k], this rank
// sends the blocks rank+j (j in held[k], j + distance < n) to rank - distance and receives the
// blocks rank+distance+j from rank + distance, straight into place in the output (blocks that
// touch travel as one message); the own block is copied and step 0 sends from the input.
RankSchedule log_step_all_gather(const CollectiveSpec& spec, const AlgorithmParams& params,
                                 int rank, const std::vector<int>& distance,
                                 const std::vector<std::vector<int>>& held);

// Block i = [i*count, (i+1)*count).
std::vector<Block> even_blocks(int nranks, std::size_t count);
// Blocks of counts[i] at displs[i], or packed in rank order when displs is empty.
std::vector<Block> uneven_blocks(const std::vector<std::size_t>& counts,
                                 const std::vector<std::size_t>& displs);
// The block layout of the big buffer of a gather/scatter/all_gather/reduce_scatter (even or _v).
std::vector<Block> big_buffer_blocks(const CollectiveSpec& spec);

// Slices covering `blocks` (in order) in `buffer`, merging neighbours that touch in memory.
std::vector<Slice> merged_slices(BufferKind buffer, const std::vector<Block>& blocks);

// n = 1 (or any rank that only keeps its own data): dst = load(src), with finalize for reducing
// collectives.
void add_local_copy(LogicalSchedule& ls, const CollectiveSpec& spec, Slice src, Slice dst);

}  // namespace twinccl::algo
