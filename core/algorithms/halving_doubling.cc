// "halving_doubling": Rabenseifner's recursive halving reduce-scatter and recursive doubling
// all-gather, for any world size.
//
// How it works, 4 ranks (p = 4 = a power of two), segments S0..S3 (one per rank):
//   halving, distance 2: 0 <-> 2, 1 <-> 3; rank 0 keeps S0 S1 and sends S2 S3 to rank 2, which
//            keeps S2 S3: each folds kept = received (op) mine
//   halving, distance 1: 0 <-> 1, 2 <-> 3; rank 0 keeps S0 ... rank r ends with segment r
//   doubling, distance 1 then 2: the reverse, exchanging what each has (all_reduce, all_gather).
// Other world sizes: with p the largest power of two <= n and e = n - p, ranks 2i and 2i+1
// (i < e) pair up first: 2i hands its data to 2i+1 (fold x[2i] op x[2i+1]) and sits out; the p
// remaining ranks run the power-of-two algorithm, renumbered q (2i+1 -> i, r >= 2e -> r-e);
// at the end 2i+1 hands 2i its result. Segment q is the part of the data the renumbered rank q
// owns: for all_reduce ring_chunk(count, p, q); for reduce_scatter/all_gather the blocks of the
// real ranks behind q (two blocks when q < e).
// Fold order of segment q: at each halving level the partner's partial comes first:
// acc = partner (op) acc. Steps are logarithmic; pieces (chunk_elements) run one after another.
#include "algorithms/algorithm_list.h"
#include "algorithms/schedule_builder.h"

namespace twinccl::algo {
namespace {

struct Layout {
  int n = 1, p = 1, extra = 0, levels = 0;
  std::vector<std::size_t> seg_begin;  // p+1 entries, elements

  explicit Layout(int nranks) : n(nranks) {
    while (p * 2 <= n) {
      p *= 2;
      ++levels;
    }
    extra = n - p;
  }
  int renumbered(int r) const { return r < 2 * extra ? (r % 2 == 1 ? r / 2 : -1) : r - extra; }
  int real(int q) const { return q < extra ? 2 * q + 1 : q + extra; }
  // First real rank whose block belongs to segment q.
  int first_block(int q) const { return q < extra ? 2 * q : q + extra; }
  int end_block(int q) const { return q + 1 == p ? n : first_block(q + 1); }
  Block segments(int first, int last) const {  // segments [first, last)
    return {seg_begin[static_cast<std::size_t>(first)],
            seg_begin[static_cast<std::size_t>(last)] - seg_begin[static_cast<std::size_t>(first)]};
  }
};

Layout layout_for(const CollectiveSpec& spec) {
  Layout l(spec.nranks);
  for (int q = 0; q <= l.p; ++q) {
    if (spec.kind == OpKind::all_reduce) {
      l.seg_begin.push_back(q == l.p ? spec.count : ring_chunk(spec.count, l.p, q).begin);
    } else {
      l.seg_begin.push_back(static_cast<std::size_t>(q == l.p ? l.n : l.first_block(q)) *
                            spec.count);
    }
  }
  return l;
}

// Recursive halving among the renumbered ranks; partials go to `partials`, the final segment
// of q is written by the last level. For reduce_scatter the last level sends one message per
// block, so that the two blocks of a paired segment can land in different buffers.
void add_halving(LogicalSchedule& ls, const Layout& l, const CollectiveSpec& spec, int q,
                 BufferKind& current, BufferKind partials, int rank) {
  int lo = 0;
  for (int level = 0; level < l.levels; ++level) {
    const int d = l.p >> (level + 1);
    const int partner = l.real(q ^ d);
    const bool upper = (q & d) != 0;
    const Block give = upper ? l.segments(lo, lo + d) : l.segments(lo + d, lo + 2 * d);
    if (upper) lo += d;
    const Block keep = l.segments(lo, lo + d);
    const auto step = static_cast<std::size_t>(1 + level);
    const bool last = level == l.levels - 1;
    if (!last || spec.kind == OpKind::all_reduce) {
      ls.add(step, send_op(partner, slice_of(current, give)));
      ls.add(step,
             recv_reduce_op(partner, slice_of(current, keep), slice_of(partials, keep), last));
      current = partials;
      continue;
    }
    // reduce_scatter, last level: one message per block; this rank's own block goes to output.
    for (int b = l.first_block(q ^ d); b < l.end_block(q ^ d); ++b) {
      ls.add(step, send_op(partner, slice_of(current, {static_cast<std::size_t>(b) * spec.count,
                                                       spec.count})));
    }
    for (int b = l.first_block(q); b < l.end_block(q); ++b) {
      const Block block{static_cast<std::size_t>(b) * spec.count, spec.count};
      const Slice dst = b == rank ? out(0, spec.count) : slice_of(partials, block);
      ls.add(step, recv_reduce_op(partner, slice_of(current, block), dst, true));
    }
    current = partials;
  }
}

void add_doubling(LogicalSchedule& ls, const Layout& l, int q, std::size_t first_step) {
  for (int level = 0; level < l.levels; ++level) {
    const int d = 1 << level;
    const int base = q & ~(d - 1);
    const int other = base ^ d;
    const auto step = first_step + static_cast<std::size_t>(level);
    ls.add(step, send_op(l.real(q ^ d), slice_of(BufferKind::output, l.segments(base, base + d))));
    ls.add(step,
           recv_op(l.real(q ^ d), slice_of(BufferKind::output, l.segments(other, other + d))));
  }
}

RankSchedule generate_hd(const CollectiveSpec& spec, const AlgorithmParams& params, int rank) {
  const Layout l = layout_for(spec);
  const int q = l.renumbered(rank);
  const std::size_t count = spec.count;
  const std::size_t total = l.seg_begin.back();
  const auto last_step = static_cast<std::size_t>(1 + 2 * l.levels);
  LogicalSchedule ls;
  if (l.n == 1) {
    add_local_copy(ls, spec, in(0, count), out(0, count));
    return ls.lower(params, Pipelining::sequential);
  }
  const bool paired = rank < 2 * l.extra;
  const bool sits_out = q < 0;
  const Block mine_block{static_cast<std::size_t>(rank) * count, count};
  switch (spec.kind) {
    case OpKind::all_reduce: {
      BufferKind current = BufferKind::input;
      if (sits_out) {
        ls.add(0, send_op(rank + 1, in(0, count)));
        ls.add(last_step, recv_op(rank + 1, out(0, count)));
        break;
      }
      if (paired) {
        ls.add(0, recv_reduce_op(rank - 1, in(0, count), out(0, count)));
        current = BufferKind::output;
      }
      add_halving(ls, l, spec, q, current, BufferKind::output, rank);
      add_doubling(ls, l, q, static_cast<std::size_t>(1 + l.levels));
      if (paired) ls.add(last_step, send_op(rank - 1, out(0, count)));
      break;
    }
    case OpKind::reduce_scatter: {
      ls.need_scratch(total);
      BufferKind current = BufferKind::input;
      if (sits_out) {
        ls.add(0, send_op(rank + 1, in(0, total)));
        ls.add(last_step, recv_op(rank + 1, out(0, count)));
        break;
      }
      if (paired) {
        ls.add(0, recv_reduce_op(rank - 1, in(0, total), scratch(0, total)));
        current = BufferKind::scratch;
      }
      add_halving(ls, l, spec, q, current, BufferKind::scratch, rank);
      if (paired) {
        ls.add(last_step,
               send_op(rank - 1, scratch((static_cast<std::size_t>(rank) - 1) * count, count)));
      }
      break;
    }
    default: {  // all_gather
      ls.add(0, copy_op(in(0, count), slice_of(BufferKind::output, mine_block)));
      const Block before{0, static_cast<std::size_t>(paired ? rank - rank % 2 : 0) * count};
      const Block after{before.count + count, total - before.count - count};
      if (sits_out) {
        ls.add(0, send_op(rank + 1, in(0, count)));
        ls.add(last_step, recv_op(rank + 1, slice_of(BufferKind::output, before)));
        ls.add(last_step, recv_op(rank + 1, slice_of(BufferKind::output, after)));
        break;
      }
      if (paired) {
        ls.add(0, recv_op(rank - 1, out((static_cast<std::size_t>(rank) - 1) * count, count)));
      }
      add_doubling(ls, l, q, 1);
      if (paired) {
        ls.add(last_step, send_op(rank - 1, slice_of(BufferKind::output, before)));
        ls.add(last_step, send_op(rank - 1, slice_of(BufferKind::output, after)));
      }
      break;
    }
  }
  return ls.lower(params, Pipelining::sequential);
}

}  // namespace

const Algorithm& halving_doubling_algorithm() {
  static const ListedAlgorithm algorithm(
      "halving_doubling",
      "Rabenseifner: recursive halving reduce-scatter, recursive doubling all-gather; log2 steps, "
      "non-powers of two fold extra ranks into partners",
      {{OpKind::all_reduce, generate_hd},
       {OpKind::reduce_scatter, generate_hd},
       {OpKind::all_gather, generate_hd}});
  return algorithm;
}

}  // namespace twinccl::algo
