// Lowering of logical schedules (channels, pipelining pieces) and the small helpers algorithms
// share. See schedule_builder.h for the rules.
#include "algorithms/schedule_builder.h"

#include <algorithm>
#include <tuple>

#include "twinccl/errors.h"

namespace twinccl::algo {

// Designated initializers name every Slice (-Wmissing-field-initializers): {} is an unused one.
StepOp send_op(int peer, Slice src) {
  return {.kind = StepOpKind::send, .peer = peer, .src = src, .src2 = {}, .dst = {}};
}

StepOp recv_op(int peer, Slice dst) {
  return {.kind = StepOpKind::recv, .peer = peer, .src = {}, .src2 = {}, .dst = dst};
}

StepOp recv_reduce_op(int peer, Slice local, Slice dst, bool finalize) {
  return {.kind = StepOpKind::recv_reduce,
          .peer = peer,
          .src = local,
          .src2 = {},
          .dst = dst,
          .finalize = finalize};
}

StepOp copy_op(Slice src, Slice dst, bool finalize) {
  return {.kind = StepOpKind::copy, .src = src, .src2 = {}, .dst = dst, .finalize = finalize};
}

StepOp reduce_op(Slice a, Slice b, Slice dst, bool finalize) {
  return {.kind = StepOpKind::reduce, .src = a, .src2 = b, .dst = dst, .finalize = finalize};
}

std::size_t op_count(const StepOp& op) {
  return op.kind == StepOpKind::send ? op.src.count : op.dst.count;
}

void LogicalSchedule::add(std::size_t step, const StepOp& op) {
  if (op_count(op) == 0) return;
  if (steps_.size() <= step) steps_.resize(step + 1);
  steps_[step].push_back(op);
}

void LogicalSchedule::need_scratch(std::size_t elements) {
  scratch_count_ = std::max(scratch_count_, elements);
}

namespace {

// The part [begin, begin+count) of op (relative to its slices).
StepOp sub_op(const StepOp& op, std::size_t begin, std::size_t count, int channel) {
  StepOp part = op;
  part.channel = channel;
  auto cut = [&](Slice& s) {
    s.offset += begin;
    s.count = count;
  };
  switch (op.kind) {
    case StepOpKind::send:
      cut(part.src);
      break;
    case StepOpKind::recv:
      cut(part.dst);
      break;
    case StepOpKind::recv_reduce:
    case StepOpKind::copy:
      cut(part.src);
      cut(part.dst);
      break;
    case StepOpKind::reduce:
      cut(part.src);
      cut(part.src2);
      cut(part.dst);
      break;
  }
  return part;
}

struct Placed {
  std::size_t step, logical_step, op_index;
  int channel;
  StepOp op;
};

}  // namespace

RankSchedule LogicalSchedule::lower(const AlgorithmParams& params, Pipelining pipelining) const {
  const auto channels = static_cast<std::size_t>(std::max(params.channels, 1));
  std::vector<Placed> placed;
  std::size_t sequential_base = 0;  // first step of the current logical step (sequential mode)
  for (std::size_t s = 0; s < steps_.size(); ++s) {
    std::size_t pieces_here = 1;
    for (std::size_t i = 0; i < steps_[s].size(); ++i) {
      const StepOp& op = steps_[s][i];
      const std::size_t total = op_count(op);
      for (std::size_t c = 0; c < channels; ++c) {
        const std::size_t begin = c * total / channels;
        const std::size_t end = (c + 1) * total / channels;
        const std::size_t part = end - begin;
        if (part == 0) continue;
        const std::size_t piece = params.chunk_elements == 0 ? part : params.chunk_elements;
        for (std::size_t p = 0, at = 0; at < part; ++p, at += piece) {
          const std::size_t len = std::min(piece, part - at);
          const std::size_t step =
              pipelining == Pipelining::overlapped ? s + p : sequential_base + p;
          pieces_here = std::max(pieces_here, p + 1);
          placed.push_back(
              {step, s, i, static_cast<int>(c), sub_op(op, begin + at, len, static_cast<int>(c))});
        }
      }
    }
    sequential_base += pieces_here;
  }
  // Order inside one step: by logical step, then the algorithm's order, then channel. Both ends
  // of every transfer sort their pieces the same way, which keeps FIFO pairing intact.
  std::stable_sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
    return std::tie(a.step, a.logical_step, a.op_index, a.channel) <
           std::tie(b.step, b.logical_step, b.op_index, b.channel);
  });
  RankSchedule result;
  result.scratch_count = scratch_count_;
  std::size_t current = 0;
  bool open = false;
  for (const Placed& p : placed) {
    if (!open || p.step != current) {
      result.steps.emplace_back();
      current = p.step;
      open = true;
    }
    result.steps.back().ops.push_back(p.op);
  }
  return result;
}

RankSchedule then(RankSchedule first, const RankSchedule& later) {
  first.steps.insert(first.steps.end(), later.steps.begin(), later.steps.end());
  first.scratch_count = std::max(first.scratch_count, later.scratch_count);
  return first;
}

std::vector<Block> even_blocks(int nranks, std::size_t count) {
  std::vector<Block> blocks(static_cast<std::size_t>(nranks));
  for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = {i * count, count};
  return blocks;
}

std::vector<Block> uneven_blocks(const std::vector<std::size_t>& counts,
                                 const std::vector<std::size_t>& displs) {
  std::vector<Block> blocks(counts.size());
  std::size_t packed = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    blocks[i] = {displs.empty() ? packed : displs.at(i), counts[i]};
    packed += counts[i];
  }
  return blocks;
}

std::vector<Block> big_buffer_blocks(const CollectiveSpec& spec) {
  if (is_uneven(spec.kind)) {
    if (spec.counts.size() != static_cast<std::size_t>(spec.nranks)) {
      throw InvalidArgument("schedule for " + std::string(name(spec.kind)) + ": " +
                            std::to_string(spec.counts.size()) + " counts for " +
                            std::to_string(spec.nranks) + " ranks");
    }
    return uneven_blocks(spec.counts, spec.displs);
  }
  return even_blocks(spec.nranks, spec.count);
}

std::vector<Slice> merged_slices(BufferKind buffer, const std::vector<Block>& blocks) {
  std::vector<Slice> slices;
  for (const Block& b : blocks) {
    if (b.count == 0) continue;
    if (!slices.empty() && slices.back().offset + slices.back().count == b.offset) {
      slices.back().count += b.count;
    } else {
      slices.push_back({buffer, b.offset, b.count});
    }
  }
  return slices;
}

void add_local_copy(LogicalSchedule& ls, const CollectiveSpec& spec, Slice src, Slice dst) {
  ls.add(0, copy_op(src, dst, spec.reducing()));
}

std::string node_layout_problem(const CollectiveSpec& spec, const AlgorithmParams& params) {
  if (spec.nranks % ranks_per_node(spec, params) == 0) return {};
  return "ranks_per_node=" + std::to_string(params.ranks_per_node) +
         " does not divide nranks=" + std::to_string(spec.nranks);
}

std::vector<OpKind> ListedAlgorithm::collectives() const {
  std::vector<OpKind> kinds;
  for (const Serves& s : serves_) kinds.push_back(s.kind);
  return kinds;
}

std::string ListedAlgorithm::why_not(const CollectiveSpec& spec,
                                     const AlgorithmParams& params) const {
  std::string reason = Algorithm::why_not(spec, params);
  return reason.empty() && check_ != nullptr ? check_(spec, params) : reason;
}

RankSchedule ListedAlgorithm::generate(const CollectiveSpec& spec, const AlgorithmParams& params,
                                       int rank) const {
  for (const Serves& s : serves_) {
    if (s.kind == spec.kind)
      return s.generate != nullptr ? s.generate(spec, params, rank) : RankSchedule{};
  }
  throw InternalError("algorithm " + std::string(name_) + " has no schedule for " +
                      std::string(twinccl::name(spec.kind)));
}

}  // namespace twinccl::algo
