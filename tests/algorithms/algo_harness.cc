#include "algorithms/algo_harness.h"

#include <cstring>
#include <stdexcept>

#include "twinccl/reduce_kernels.h"
#include "twinccl/reduction.h"
#include "twinccl/schedule_interpreter.h"

namespace algo_test {

using namespace twinccl;

namespace {

constexpr std::byte kUnwritten{0x5A};

struct Block {
  std::size_t offset, count;
};

std::vector<Block> layout(const std::vector<std::size_t>& counts,
                          const std::vector<std::size_t>& displs) {
  std::vector<Block> blocks;
  std::size_t packed = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    blocks.push_back({displs.empty() ? packed : displs[i], counts[i]});
    packed += counts[i];
  }
  return blocks;
}

// The big buffer's blocks of a gather/scatter/all_gather/reduce_scatter, even or _v.
std::vector<Block> big_blocks(const CollectiveSpec& spec) {
  if (spec.kind == OpKind::all_to_all_v) {
    return std::vector<Block>(static_cast<std::size_t>(spec.nranks), Block{0, 0});
  }
  if (is_uneven(spec.kind)) return layout(spec.counts, spec.displs);
  std::vector<std::size_t> counts(static_cast<std::size_t>(spec.nranks), spec.count);
  return layout(counts, {});
}

// all_to_all(_v): rank r's block for peer p in its input (send) or output (recv).
Block a2a_block(const CollectiveSpec& spec, int r, int p, bool recv) {
  const auto n = static_cast<std::size_t>(spec.nranks);
  if (spec.kind == OpKind::all_to_all)
    return {static_cast<std::size_t>(p) * spec.count, spec.count};
  std::vector<std::size_t> counts(n);
  for (std::size_t q = 0; q < n; ++q) {
    counts[q] = recv ? spec.matrix[q * n + static_cast<std::size_t>(r)]
                     : spec.matrix[static_cast<std::size_t>(r) * n + q];
  }
  const std::vector<std::size_t>& all = recv ? spec.recv_displs : spec.send_displs;
  std::vector<std::size_t> displs;
  if (!all.empty()) {
    displs.assign(all.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r) * n),
                  all.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r + 1) * n));
  }
  return layout(counts, displs)[static_cast<std::size_t>(p)];
}

double value_at(Values values, DataType dtype, int rank, std::size_t i) {
  const auto mix = static_cast<long>(static_cast<std::size_t>(rank) * 37 + i * 11 + 5);
  if (values == Values::fractions && is_floating(dtype))
    return static_cast<double>(mix % 97) / 7.0 - 5.3;
  return static_cast<double>(mix % 7 - 3);
}

}  // namespace

CollectiveSpec make_spec(OpKind kind, int nranks, std::size_t count, int root) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.nranks = nranks;
  spec.count = count;
  spec.root = root;
  const auto n = static_cast<std::size_t>(nranks);
  if (kind == OpKind::all_to_all_v) {
    spec.matrix.resize(n * n);
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t d = 0; d < n; ++d)
        spec.matrix[s * n + d] = (s + 2 * d + count) % (count + 2);
    }
  } else if (is_uneven(kind)) {
    spec.counts.resize(n);
    for (std::size_t r = 0; r < n; ++r) spec.counts[r] = r % 3 == 1 ? 0 : count + r % 2;
  }
  return spec;
}

std::vector<Bytes> make_inputs(const Setup& setup) {
  const std::size_t esize = size_of(setup.dtype);
  std::vector<Bytes> inputs;
  for (int r = 0; r < setup.spec.nranks; ++r) {
    const std::size_t count = input_elements(setup.spec, r);
    Bytes data(count * esize);
    for (std::size_t i = 0; i < count; ++i) {
      store_element(setup.dtype, data.data(), i, value_at(setup.values, setup.dtype, r, i));
    }
    inputs.push_back(std::move(data));
  }
  return inputs;
}

namespace {

Reduction make_reduction(const Setup& setup) {
  std::vector<ReduceOp> ops = setup.ops;
  if (ops.empty()) ops.assign(static_cast<std::size_t>(setup.spec.nranks), ReduceOp::sum());
  return Reduction::make(setup.dtype, ops);
}

}  // namespace

std::vector<Bytes> run_algorithm(const Setup& setup, const std::vector<Bytes>& inputs) {
  const CollectiveSpec& spec = setup.spec;
  const Schedule schedule = build_schedule(spec, setup.algorithm, setup.params);
  check_schedule(schedule);
  const std::size_t esize = size_of(setup.dtype);
  const auto n = static_cast<std::size_t>(spec.nranks);
  std::vector<Bytes> outputs(n), big(n);
  std::vector<RankBuffers> buffers(n);
  for (std::size_t r = 0; r < n; ++r) {
    const int rank = static_cast<int>(r);
    const std::size_t out_count = output_elements(spec, rank);
    outputs[r].assign(out_count * esize, kUnwritten);
    buffers[r] = {inputs[r].data(), outputs[r].data()};
    if (!setup.in_place) continue;
    const bool root = rank == spec.root;
    switch (spec.kind) {
      case OpKind::all_reduce:
      case OpKind::broadcast:
      case OpKind::reduce:
        if (spec.kind == OpKind::all_reduce || root) {
          outputs[r] = inputs[r];
          buffers[r] = {outputs[r].data(), outputs[r].data()};
        }
        break;
      case OpKind::reduce_scatter:
        big[r] = inputs[r];
        buffers[r] = {big[r].data(), big[r].data() + r * spec.count * esize};
        break;
      case OpKind::all_gather:
        std::memcpy(outputs[r].data() + r * spec.count * esize, inputs[r].data(), inputs[r].size());
        buffers[r] = {outputs[r].data() + r * spec.count * esize, outputs[r].data()};
        break;
      default:
        throw std::invalid_argument("no in-place form for this collective in the test harness");
    }
  }
  const Reduction reduction = spec.reducing() ? make_reduction(setup) : Reduction{};
  interpret_schedule(schedule, setup.dtype, spec.reducing() ? &reduction : nullptr, buffers);
  if (setup.in_place && spec.kind == OpKind::reduce_scatter) {
    for (std::size_t r = 0; r < n; ++r) {
      const auto* at = static_cast<const std::byte*>(buffers[r].output);
      outputs[r].assign(at, at + spec.count * esize);
    }
  }
  return outputs;
}

std::vector<Bytes> expected_outputs(const Setup& setup, const std::vector<Bytes>& inputs) {
  const CollectiveSpec& spec = setup.spec;
  const int n = spec.nranks;
  const std::size_t esize = size_of(setup.dtype);
  std::vector<Bytes> out;
  for (int r = 0; r < n; ++r) out.emplace_back(output_elements(spec, r) * esize, kUnwritten);
  const auto copy = [&](int to, std::size_t to_index, int from, std::size_t from_index,
                        std::size_t count) {
    if (count == 0) return;
    std::memcpy(out[static_cast<std::size_t>(to)].data() + to_index * esize,
                inputs[static_cast<std::size_t>(from)].data() + from_index * esize, count * esize);
  };
  Reduction reduction;
  if (spec.reducing()) reduction = make_reduction(setup);
  Bytes acc(esize), tmp(esize);
  // out[to][to_index] = fold over ranks ring_fold_rank(n, chunk, k) of input[k][from_index].
  const auto fold = [&](int to, std::size_t to_index, int chunk, std::size_t from_index) {
    for (int k = 0; k < n; ++k) {
      const int who = ring_fold_rank(n, chunk, k);
      const std::byte* x = inputs[static_cast<std::size_t>(who)].data() + from_index * esize;
      reduction.load(who, k == 0 ? acc.data() : tmp.data(), x, 1);
      if (k > 0) reduction.combine(acc.data(), acc.data(), tmp.data(), 1);
    }
    reduction.finalize(acc.data(), 1);
    std::memcpy(out[static_cast<std::size_t>(to)].data() + to_index * esize, acc.data(), esize);
  };
  const std::vector<Block> blocks = big_blocks(spec);
  for (int r = 0; r < n; ++r) {
    const Block mine = blocks[static_cast<std::size_t>(r)];
    switch (spec.kind) {
      case OpKind::all_reduce:
        for (int c = 0; c < n; ++c) {
          const ElementRange range = ring_chunk(spec.count, n, c);
          for (std::size_t i = range.begin; i < range.end; ++i) fold(r, i, c, i);
        }
        break;
      case OpKind::reduce_scatter:
      case OpKind::reduce_scatter_v:
        for (std::size_t i = 0; i < mine.count; ++i) fold(r, i, r, mine.offset + i);
        break;
      case OpKind::reduce:
        if (r == spec.root) {
          for (std::size_t i = 0; i < spec.count; ++i) fold(r, i, r, i);
        }
        break;
      case OpKind::broadcast:
        copy(r, 0, spec.root, 0, spec.count);
        break;
      case OpKind::all_gather:
      case OpKind::all_gather_v:
        for (int q = 0; q < n; ++q) {
          copy(r, blocks[static_cast<std::size_t>(q)].offset, q, 0,
               blocks[static_cast<std::size_t>(q)].count);
        }
        break;
      case OpKind::gather:
      case OpKind::gather_v:
        if (r == spec.root) {
          for (int q = 0; q < n; ++q) {
            copy(r, blocks[static_cast<std::size_t>(q)].offset, q, 0,
                 blocks[static_cast<std::size_t>(q)].count);
          }
        }
        break;
      case OpKind::scatter:
      case OpKind::scatter_v:
        copy(r, 0, spec.root, mine.offset, mine.count);
        break;
      case OpKind::all_to_all:
      case OpKind::all_to_all_v:
        for (int p = 0; p < n; ++p) {
          const Block to = a2a_block(spec, r, p, true);
          copy(r, to.offset, p, a2a_block(spec, p, r, false).offset, to.count);
        }
        break;
      default:
        break;
    }
  }
  return out;
}

std::string describe(const Setup& setup) {
  std::string text =
      setup.algorithm + " " + std::string(name(setup.spec.kind)) +
      " n=" + std::to_string(setup.spec.nranks) + " count=" + std::to_string(setup.spec.count) +
      " root=" + std::to_string(setup.spec.root) +
      " channels=" + std::to_string(setup.params.channels) +
      " chunk=" + std::to_string(setup.params.chunk_elements) +
      " rpn=" + std::to_string(setup.params.ranks_per_node) + " " + std::string(name(setup.dtype));
  if (!setup.ops.empty()) text += " " + to_string(setup.ops.front());
  if (setup.in_place) text += " in place";
  return text;
}

bool folds_in_ring_order(const std::string& algorithm) {
  return algorithm == "ring" || algorithm == "direct" || algorithm == "nvls";
}

}  // namespace algo_test
