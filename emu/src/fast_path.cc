// The direct fast path: with every rank's pointers known at the rendezvous, each rank thread
// computes its share straight from the other ranks' memory, like a shared-memory NCCL kernel.
//
// How it works (all_reduce, 4 ranks): the count is cut into the ring's chunks c0..c3; rank r owns
// chunk r. For each cache-sized block of its chunk, rank r folds the inputs in the ring's order
// (x[r+1], x[r+2], x[r+3], x[r]) into a local accumulator, then writes the block to all four
// outputs. Every input is read once and every output written once: the memory-traffic floor.
// Because the fold order and the rounding are the ring schedule's, the bytes are identical to the
// schedule path. A final barrier makes every output complete before any rank returns.
//
// Small collectives (lead_small_collective): waking every rank thread costs far more than the
// work, so the last rank to arrive runs every rank's share, in rank order, before the others
// wake (Rendezvous's `lead`): one sleep and one wake-up per rank and collective, no barrier.
// The shares never overlap in what they write, so running them one after the other gives the
// same bytes as running them in parallel.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "executor.h"
#include "twinccl/algorithms.h"

namespace twinccl::emu {
namespace {

constexpr std::size_t kBlockBytes = 32 * 1024;

const char* in(const Meeting& m, int r) {
  return static_cast<const char*>(m.ops[static_cast<std::size_t>(r)].send);
}
char* out(const Meeting& m, int r) {
  return static_cast<char*>(m.ops[static_cast<std::size_t>(r)].recv);
}

void copy_bytes(char* dst, const char* src, std::size_t bytes) {
  if (dst != src && bytes > 0) std::memmove(dst, src, bytes);
}

// Folds elements [begin, begin+n) of every rank's input at byte offset `in_offset`, in the ring's
// order for `chunk`, and hands each finished block to write(block_offset_elements, data, len).
template <class Write>
void fold_ring_order(const RankContext& ctx, int chunk, std::size_t in_offset, std::size_t n,
                     Write write) {
  const Meeting& m = ctx.meeting;
  const Reduction& red = *ctx.reduction;
  std::size_t element = size_of(ctx.dtype);
  std::size_t block = std::max<std::size_t>(1, kBlockBytes / element);
  std::size_t first_block = std::min(block, n);
  alignas(64) char small_acc[256];
  alignas(64) char small_tmp[256];     // small collectives: no allocation, nothing to clear
  std::vector<char> own_acc, own_tmp;  // no staging given (never once a rank's cache is there)
  char* acc_data = small_acc;
  char* tmp_data = small_tmp;
  if (first_block * element > sizeof(small_acc)) {
    std::vector<char>& acc = ctx.staging != nullptr ? ctx.staging->fold_acc : own_acc;
    std::vector<char>& tmp = ctx.staging != nullptr ? ctx.staging->fold_tmp : own_tmp;
    // Grow-only (at most one block each): every byte used is written before it is read.
    if (acc.size() < first_block * element) acc.resize(first_block * element);
    if (red.scales_inputs() && tmp.size() < first_block * element)
      tmp.resize(first_block * element);
    acc_data = acc.data();
    tmp_data = tmp.data();
  }
  for (std::size_t done = 0; done < n; done += block) {
    std::size_t len = std::min(block, n - done);
    std::size_t off = in_offset + done * element;
    int first = ring_fold_rank(m.nranks, chunk, 0);
    int k = 1;
    if (red.scales_inputs() || m.nranks == 1) {
      red.load(first, acc_data, in(m, first) + off, len);
    } else {  // acc = x[first] op x[second]: saves copying the first contribution
      red.combine(acc_data, in(m, first) + off, in(m, ring_fold_rank(m.nranks, chunk, 1)) + off,
                  len);
      k = 2;
    }
    for (; k < m.nranks; ++k) {
      int r = ring_fold_rank(m.nranks, chunk, k);
      const char* x = in(m, r) + off;
      if (red.scales_inputs()) {
        red.load(r, tmp_data, x, len);
        x = tmp_data;
      }
      red.combine(acc_data, acc_data, x, len);
    }
    red.finalize(acc_data, len);
    write(done, acc_data, len);
  }
}

void all_reduce(const RankContext& ctx) {
  const Meeting& m = ctx.meeting;
  std::size_t element = size_of(ctx.dtype);
  ElementRange chunk = ring_chunk(m.ops[0].count, m.nranks, ctx.rank);
  fold_ring_order(ctx, ctx.rank, chunk.begin * element, chunk.size(),
                  [&](std::size_t done, const char* data, std::size_t len) {
                    for (int q = 0; q < m.nranks; ++q)
                      copy_bytes(out(m, q) + (chunk.begin + done) * element, data, len * element);
                  });
}

void reduce_scatter(const RankContext& ctx) {
  const Meeting& m = ctx.meeting;
  std::size_t element = size_of(ctx.dtype);
  std::size_t count = m.ops[0].count;
  char* mine = out(m, ctx.rank);
  fold_ring_order(ctx, ctx.rank, static_cast<std::size_t>(ctx.rank) * count * element, count,
                  [&](std::size_t done, const char* data, std::size_t len) {
                    copy_bytes(mine + done * element, data, len * element);
                  });
}

void reduce(const RankContext& ctx) {
  const Meeting& m = ctx.meeting;
  std::size_t element = size_of(ctx.dtype);
  int root = m.ops[0].root;
  ElementRange part =
      ring_chunk(m.ops[0].count, m.nranks, ctx.rank);  // this rank's share of the work
  char* target = out(m, root);
  fold_ring_order(ctx, root, part.begin * element, part.size(),
                  [&](std::size_t done, const char* data, std::size_t len) {
                    copy_bytes(target + (part.begin + done) * element, data, len * element);
                  });
}

void all_gather(const RankContext& ctx) {
  const Meeting& m = ctx.meeting;
  std::size_t bytes = m.ops[0].count * size_of(ctx.dtype);
  for (int q = 0; q < m.nranks; ++q)
    copy_bytes(out(m, ctx.rank) + static_cast<std::size_t>(q) * bytes, in(m, q), bytes);
}

void broadcast(const RankContext& ctx) {
  const Meeting& m = ctx.meeting;
  int root = m.ops[0].root;
  copy_bytes(out(m, ctx.rank), in(m, root), m.ops[0].count * size_of(ctx.dtype));
}

void all_to_all(const RankContext& ctx) {
  const Meeting& m = ctx.meeting;
  std::size_t bytes = m.ops[0].count * size_of(ctx.dtype);
  auto me = static_cast<std::size_t>(ctx.rank);
  for (int q = 0; q < m.nranks; ++q) {
    copy_bytes(out(m, ctx.rank) + static_cast<std::size_t>(q) * bytes, in(m, q) + me * bytes,
               bytes);
  }
}

void gather(const RankContext& ctx) {
  const Meeting& m = ctx.meeting;
  std::size_t bytes = m.ops[0].count * size_of(ctx.dtype);
  copy_bytes(out(m, m.ops[0].root) + static_cast<std::size_t>(ctx.rank) * bytes, in(m, ctx.rank),
             bytes);
}

void scatter(const RankContext& ctx) {
  const Meeting& m = ctx.meeting;
  std::size_t bytes = m.ops[0].count * size_of(ctx.dtype);
  copy_bytes(out(m, ctx.rank), in(m, m.ops[0].root) + static_cast<std::size_t>(ctx.rank) * bytes,
             bytes);
}

// The collectives with a fast path; the others (and a new kind until it has one) run their
// schedule.
struct FastPath {
  OpKind kind;
  void (*run)(const RankContext&);
};
constexpr FastPath kFastPaths[] = {
    {OpKind::all_reduce, all_reduce}, {OpKind::reduce_scatter, reduce_scatter},
    {OpKind::reduce, reduce},         {OpKind::all_gather, all_gather},
    {OpKind::broadcast, broadcast},   {OpKind::all_to_all, all_to_all},
    {OpKind::gather, gather},         {OpKind::scatter, scatter},
};

const FastPath* fast_path_of(OpKind kind) {
  for (const FastPath& p : kFastPaths) {
    if (p.kind == kind) return &p;
  }
  return nullptr;
}

void run_share(const RankContext& ctx) {
  const FastPath* p = fast_path_of(ctx.meeting.ops[0].kind);
  if (p == nullptr) throw InternalError(ctx.meeting.label() + ": no fast path");
  p->run(ctx);
}

}  // namespace

bool fast_path_supports(OpKind kind) { return fast_path_of(kind) != nullptr; }

void run_fast_path(const RankContext& ctx) {
  try {
    run_share(ctx);
  } catch (const AbortedError&) {
    throw;
  } catch (const std::exception& e) {
    ctx.meeting.world->abort(ctx.meeting.label() + ": rank " + std::to_string(ctx.rank) +
                             " failed: " + e.what());
    throw;
  }
  ctx.meeting.sync(ctx.rank);
}

bool small_enough_to_lead(const OpDesc& op) {
  return op.count * size_of(op.dtype) <= kLeadMaxBytes;
}

void lead_small_collective(Meeting& m, RankStaging* staging) {
  bool agreed = false;  // spec_from_meeting passed: an InvalidArgument later is a real failure
  try {
    spec_from_meeting(m);  // every rank's call agrees (each rank checks it again when it fails)
    agreed = true;
    const OpDesc& op0 = m.ops[0];
    if (op0.kind == OpKind::barrier) return;
    std::optional<Reduction> reduction;
    if (is_reducing(op0.kind)) {
      std::vector<ReduceOp> own_ops;
      std::vector<ReduceOp>& ops = staging != nullptr ? staging->ops : own_ops;
      ops.clear();
      ops.reserve(static_cast<std::size_t>(m.nranks));  // one allocation, the first time it leads
      for (int r = 0; r < m.nranks; ++r) ops.push_back(m.ops[static_cast<std::size_t>(r)].op);
      reduction = Reduction::make(op0.dtype, ops);
    }
    for (int r = 0; r < m.nranks; ++r)
      run_share(RankContext{m, r, reduction ? &*reduction : nullptr, op0.dtype, staging});
  } catch (const MismatchError&) {
    m.lead_error = std::current_exception();
    m.mismatch_error = true;
  } catch (const InvalidArgument& e) {
    m.lead_error = std::current_exception();
    m.mismatch_error = !agreed;  // shared buffers: every rank throws its own, nothing aborts
    if (agreed) {
      m.world->abort(m.label() + ": rank " + std::to_string(m.leader) +
                     " failed running it for every rank: " + e.what());
    }
  } catch (const std::exception& e) {
    m.world->abort(m.label() + ": rank " + std::to_string(m.leader) +
                   " failed running it for every rank: " + e.what());
    m.lead_error = std::current_exception();
  } catch (...) {
    m.world->abort(m.label() + ": rank " + std::to_string(m.leader) +
                   " failed running it for every rank");
    m.lead_error = std::current_exception();
  }
}

}  // namespace twinccl::emu
